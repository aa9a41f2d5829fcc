import { jest } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/app.js';
import { report } from '../support/locations.js';
import { TRACKERS, trackerWorld, type TrackerWorld } from '../support/trackers.js';

const API = '/api/v1';
const REPORTS = `${API}/locations/reports`;
const TOO_DEEP = 'must not be nested more than 32 levels deep';
const TOO_LARGE = { detail: 'Request body too large' };

/** `[[[…]]]`, `levels` arrays deep, as raw JSON text (2 bytes a level). */
const arrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/**
 * Request bodies are read after the guard and within each route's own limit, and a body nested
 * deeper than the bound is refused from its bytes before JSON.parse sees it: a request that will
 * be refused costs a header check or one scan, and no body can hold the event loop.
 */
describe('request bodies: read after the guard, bounded per route, depth checked before parsing', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let parse: jest.SpiedFunction<typeof JSON.parse>;

  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: 'production' } });
    w = await trackerWorld(t);
  });
  beforeEach(() => {
    parse = jest.spyOn(JSON, 'parse');
  });
  afterEach(() => parse.mockRestore());
  afterAll(() => t.close());

  /** Whether JSON.parse was given a text at least this long since the test began. */
  const parsedTextOf = (length: number) =>
    parse.mock.calls.some(([text]) => typeof text === 'string' && text.length >= length);

  const json = (method: 'post' | 'patch', url: string, raw: string, auth?: { Authorization: string }) => {
    const req = t.http()[method](url).set('Content-Type', 'application/json');
    return (auth ? req.set(auth) : req).send(raw);
  };

  it('a 7.9 MB nested body without a token, with a bad one or for a role the route refuses: 401/403, never parsed', async () => {
    const deep = arrays(3_950_000);
    const attempts = [
      { call: () => json('post', TRACKERS, deep), status: 401, detail: 'Not authenticated' },
      { call: () => json('post', REPORTS, deep), status: 401, detail: 'Not authenticated' },
      {
        call: () => json('post', REPORTS, deep, { Authorization: 'Bearer not-a-token' }),
        status: 401,
        detail: 'Could not validate credentials',
      },
      { call: () => json('post', REPORTS, deep, w.userA.auth), status: 403, detail: 'Not enough permissions' },
    ];
    for (const { call, status, detail } of attempts) {
      // The loop stays free: a request beside it is answered as usual.
      const [refused, beside] = await Promise.all([call(), t.http().get(`${API}/health/basic`).set(w.admin.auth)]);
      expect([refused.status, refused.body]).toEqual([status, { detail }]);
      expect(beside.status).toBe(200);
    }
    expect(parsedTextOf(1_000_000)).toBe(false);
  });

  it('a body nested deeper than the bound, within the route limit and with a token: 422 from its bytes, never parsed', async () => {
    const deep = arrays(1_000_000);
    for (const auth of [w.admin.auth, w.ingest.auth]) {
      const res = await json('post', REPORTS, deep, auth);
      expect([res.status, res.body]).toEqual([
        422,
        { detail: `Validation failed: body: ${TOO_DEEP}`, errors: [{ field: 'body', message: TOO_DEEP }] },
      ]);
    }
    expect(parsedTextOf(1_000_000)).toBe(false);
    // Objects count as much as arrays, and the bound is the one the parsed input is held to.
    const objects = `${'{"a":'.repeat(33)}1${'}'.repeat(33)}`;
    expect((await json('post', TRACKERS, objects, w.admin.auth)).body.errors).toEqual([
      { field: 'body', message: TOO_DEEP },
    ]);
  });

  it('brackets and escaped quotes inside strings are text, not nesting', async () => {
    const name = `${'[{'.repeat(40)}\\"${'['.repeat(40)}`;
    const res = await json('post', `${API}/clients`, `{"name":"${name}"}`, w.admin.auth);
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name.replace('\\"', '"'));
  });

  it('most routes take 64 kB; over it → 413 with the detail, while the body arrives', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(64 * 1024) });
    for (const [method, url] of [
      ['post', `${API}/clients`],
      ['post', TRACKERS],
      ['patch', `${API}/users/me`],
      ['post', `${API}/auth/login/json`],
    ] as const) {
      const res = await json(method, url, big, w.admin.auth);
      expect([method, url, res.status, res.body]).toEqual([method, url, 413, TOO_LARGE]);
    }
    expect(parsedTextOf(64 * 1024)).toBe(false);
    // Just under the limit is read and judged on its fields.
    const under = await json('post', `${API}/clients`, JSON.stringify({ name: 'x'.repeat(60_000) }), w.admin.auth);
    expect(under.status).toBe(422);
    expect(under.body.errors).toEqual([{ field: 'name', message: expect.any(String) }]);
  });

  it('user records take a full client_list (10 000 ids, ~110 kB)', async () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => 2_000_000_000 + i);
    const res = await json('patch', `${API}/users/${w.userA.id}`, JSON.stringify({ client_list: ids }), w.admin.auth);
    // Read and judged: the ids do not exist (not "too large").
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['client_list']);
  });

  it('the ingest routes take a full batch of 10 000 reports at their longest (~2.3 MB), and refuse 4 MB + 1', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA.id });
    const start = Date.UTC(2025, 0, 1);
    const reports = Array.from({ length: 10_000 }, (_, i) =>
      report(tracker.id, new Date(start + i * 60_000).toISOString().replace('Z', '+00:00'), {
        latitude: 52.12345678901234,
        longitude: 13.12345678901234,
        accuracy_m: 12345.678901234567,
        source: 's'.repeat(64),
      }),
    );
    const body = JSON.stringify({ reports });
    expect(body.length).toBeGreaterThan(2_000_000);
    const res = await json('post', REPORTS, body, w.ingest.auth);
    expect([res.status, res.body.accepted]).toEqual([200, 10_000]);
    const over = await json('post', REPORTS, `{"reports":[],"x":"${'x'.repeat(4 * 1024 * 1024)}"}`, w.ingest.auth);
    expect([over.status, over.body]).toEqual([413, TOO_LARGE]);
  });
});
