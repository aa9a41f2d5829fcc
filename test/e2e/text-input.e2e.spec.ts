import type { TestApp } from '../support/app.js';
import { countRows, createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const API = '/api/v1';
const CONTROL = 'must not contain control characters';
const MULTILINE = 'must not contain control characters other than tab and line breaks';
const MALFORMED = 'must be valid Unicode text (no lone surrogates)';
const TOO_DEEP = 'must not be nested more than 32 levels deep';

/** `{"email": {"email": … "x" …}}`, `levels` objects deep, as raw JSON text. */
const nested = (key: string, levels: number) => `${`{"${key}":`.repeat(levels)}"x"${'}'.repeat(levels)}`;

/**
 * Hostile text and shapes in bodies, queries and paths, in production mode: NUL and other control
 * characters, lone surrogates, invalid UTF-8, deep nesting and keys named after Object.prototype
 * members. Every one is a 4xx with a detail (422 naming the field), never a 500 or a stored row.
 */
describe('text and shape of incoming input (production mode)', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld({ env: { NODE_ENV: 'production' } })));
  afterAll(() => t.close());

  const json = (
    method: 'post' | 'put' | 'patch',
    url: string,
    raw: string | Buffer,
    auth?: { Authorization: string },
  ) => {
    const req = t.http()[method](url).set('Content-Type', 'application/json');
    return (auth ? req.set(auth) : req).send(raw);
  };
  const expect422 = (
    res: { status: number; body: { detail?: unknown; errors?: unknown } },
    errors: { field: string; message: string }[],
  ) => {
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(errors);
    expect(res.body.detail).toBe(`Validation failed: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
  };

  describe('NUL bytes', () => {
    it('login answers the documented 401 for a NUL in the e-mail or password, in every encoding', async () => {
      const user = await t.factories.user();
      const attempts = [
        t.http().post(`${API}/auth/login/json`).send({ email: 'x\u0000@example.com', password: 'password' }),
        t
          .http()
          .post(`${API}/auth/login/json`)
          .send({ email: `${user.email}\u0000`, password: user.password }),
        t
          .http()
          .post(`${API}/auth/login/json`)
          .send({ email: user.email, password: `${user.password}\u0000` }),
        t.http().post(`${API}/auth/login`).type('form').send(`username=x%00%40example.com&password=password`),
        t.http().post(`${API}/auth/login`).send({ username: 'x\u0000@example.com', password: 'password' }),
        t.http().post(`${API}/auth/login`).field('username', 'x\u0000@example.com').field('password', 'password'),
      ];
      for (const attempt of attempts) {
        const res = await attempt;
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ detail: 'Incorrect email or password' });
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    });

    it('refresh answers 401 "Invalid refresh token" for a token with a NUL', async () => {
      const res = await t.http().post(`${API}/auth/refresh`).send({ refresh_token: 'abc\u0000def' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid refresh token' });
    });

    it("a credential checked by its handler keeps the handler's answer; a new password with a NUL is 422", async () => {
      const user = await t.factories.user();
      const wrong = await t
        .http()
        .patch(`${API}/users/me`)
        .set(user.auth)
        .send({ password: 'new-password-1', current_password: `${user.password}\u0000` });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({ detail: 'Current password is incorrect' });
      const nul = await t
        .http()
        .patch(`${API}/users/me`)
        .set(user.auth)
        .send({ password: 'new\u0000password', current_password: user.password });
      expect422(nul, [{ field: 'password', message: CONTROL }]);
      const login = await t.http().post(`${API}/auth/login/json`).send({ email: user.email, password: user.password });
      expect(login.status).toBe(200);
    });

    it('every list refuses ?name=%00 with 422 naming the parameter', async () => {
      for (const list of ['trackers', 'clients', 'brands', 'storage-locations', 'delivery-locations']) {
        const res = await t.http().get(`${API}/${list}?name=%00`).set(w.admin.auth);
        expect422(res, [{ field: 'name', message: CONTROL }]);
      }
    });

    it('every text field of every body refuses a NUL with 422, and nothing is stored', async () => {
      const tracker = await t.factories.tracker({ runId: w.runA.id });
      const nul = 'a\u0000b';
      const cases: [string, 'post' | 'put' | 'patch', string, Record<string, unknown>][] = [
        ['name', 'post', TRACKERS, { name: nul, production_run_id: w.runA.id }],
        ['notes', 'post', TRACKERS, { name: 'nul-notes', production_run_id: w.runA.id, notes: nul }],
        ['notes', 'put', `${TRACKERS}/${tracker.id}`, { notes: nul }],
        ['notes', 'post', `${TRACKERS}/${tracker.id}/status`, { status: 'IN_TRANSIT', notes: nul }],
        ['name', 'post', `${API}/clients`, { name: nul }],
        ['name', 'post', `${API}/brands`, { name: nul, client_id: w.clientA.id }],
        ['name', 'post', `${API}/storage-locations`, { name: nul }],
        ['address', 'post', `${API}/delivery-locations`, { name: 'nul-address', address: nul }],
        ['description', 'post', `${API}/production-runs`, { description: nul, brand_id: w.runA.brand_id }],
        ['name', 'post', `${API}/users`, { name: nul, email: 'nul-user@example.com', password: 'password123' }],
        ['name', 'patch', `${API}/users/me`, { name: nul }],
      ];
      for (const [field, method, url, body] of cases) {
        const res = await t.http()[method](url).set(w.admin.auth).send(body);
        expect422(res, [{ field, message: field === 'name' ? CONTROL : MULTILINE }]);
      }
      expect(await countRows(t.db, 'trackers', "name LIKE 'nul-%'")).toBe(0);
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(1);
      const [{ n }] = await t.db.query("SELECT count(*)::int AS n FROM users WHERE email = 'nul-user@example.com'");
      expect(n).toBe(0);
    });
  });

  describe('deep JSON', () => {
    it('422 for a body nested 3000 levels deep, with or without a token, before anything walks it', async () => {
      const deep = nested('email', 3000);
      const calls = [
        () => json('post', `${API}/auth/login/json`, deep),
        () => json('post', `${API}/auth/refresh`, nested('refresh_token', 3000)),
        () => json('post', TRACKERS, nested('name', 3000), w.admin.auth),
        () => json('patch', `${API}/users/me`, nested('name', 3000), w.admin.auth),
        // A million levels of arrays (2 MB, on the ingest route whose limit admits it): refused from its bytes.
        () =>
          json('post', `${API}/locations/reports`, `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`, w.admin.auth),
      ];
      for (const call of calls) expect422(await call(), [{ field: 'body', message: TOO_DEEP }]);
      expect((await json('post', TRACKERS, nested('name', 3000))).status).toBe(401);
    });

    it('nesting up to the bound gets the ordinary answers', async () => {
      const notString = await json('post', `${API}/auth/login/json`, `{"email":${nested('a', 31)},"password":"p"}`);
      expect(notString.status).toBe(422);
      expect(notString.body.errors.length).toBeGreaterThan(0);
      for (const error of notString.body.errors) expect(error.field).toBe('email');
      const tooDeep = await json('post', `${API}/auth/login/json`, `{"email":${nested('a', 32)},"password":"p"}`);
      expect422(tooDeep, [{ field: 'body', message: TOO_DEEP }]);
      const missing = await t.http().post(`${API}/auth/login/json`).send({ password: 'p' });
      expect(missing.status).toBe(422);
      expect(missing.body.errors.map((e: { field: string }) => e.field)).toContain('email');
    });
  });

  describe('keys named after Object.prototype members', () => {
    it('are unknown fields in bodies (422 "should not exist"), and nothing is created', async () => {
      for (const key of ['constructor', '__proto__', 'hasOwnProperty', 'toString', 'valueOf']) {
        const res = await json(
          'post',
          TRACKERS,
          `{"name":"proto-${key}","production_run_id":${w.runA.id},"${key}":5}`,
          w.admin.auth,
        );
        expect422(res, [{ field: key, message: 'should not exist' }]);
      }
      const nestedKey = await json(
        'patch',
        `${API}/users/me`,
        '{"notification_preferences":{"email":true,"constructor":1}}',
        w.admin.auth,
      );
      expect422(nestedKey, [{ field: 'notification_preferences.constructor', message: 'should not exist' }]);
      expect(await countRows(t.db, 'trackers', "name LIKE 'proto-%'")).toBe(0);
    });

    it('are unknown parameters in queries', async () => {
      for (const key of ['constructor', '__proto__', 'toString']) {
        expect422(await t.http().get(`${TRACKERS}?${key}=1`).set(w.admin.auth), [
          { field: key, message: 'should not exist' },
        ]);
      }
    });
  });

  describe('control characters and malformed text', () => {
    it('single-line fields refuse every control character, tab and line breaks included', async () => {
      for (const bad of ['a\tb', 'a\nb', 'a\rb', 'a\u0007b', 'a\u001bb', 'a\u007fb', 'a\u0085b', 'a\u009fb']) {
        expect422(await t.http().post(TRACKERS).set(w.admin.auth).send({ name: bad, production_run_id: w.runA.id }), [
          { field: 'name', message: CONTROL },
        ]);
      }
      expect422(await t.http().get(`${TRACKERS}?name=a%0Ab`).set(w.admin.auth), [{ field: 'name', message: CONTROL }]);
      expect(await countRows(t.db, 'trackers', "name ~ '^a.b$'")).toBe(0);
    });

    it('multi-line fields keep tab and every line ending exactly, and refuse other control characters', async () => {
      const notes = 'line 1\r\nline 2\nline 3\rcol\tcol';
      const created = await t
        .http()
        .post(TRACKERS)
        .set(w.admin.auth)
        .send({ name: 'multi-line', production_run_id: w.runA.id, notes });
      expect(created.status).toBe(201);
      expect(created.body.notes).toBe(notes);
      const [row] = await t.db.query('SELECT notes FROM trackers WHERE id = $1', [created.body.id]);
      expect(row.notes).toBe(notes);
      const address = 'Street 1\r\nCity';
      const place = await t
        .http()
        .post(`${API}/storage-locations`)
        .set(w.admin.auth)
        .send({ name: 'multi-line place', address });
      expect(place.status).toBe(201);
      expect(place.body.address).toBe(address);
      for (const bad of ['a\u0000b', 'a\u000bb', 'a\u000cb', 'a\u007fb', 'a\u0080b']) {
        expect422(await t.http().put(`${TRACKERS}/${created.body.id}`).set(w.admin.auth).send({ notes: bad }), [
          { field: 'notes', message: MULTILINE },
        ]);
      }
    });

    it('lone surrogates (JSON escapes) are 422, not stored as U+FFFD; paired ones are fine', async () => {
      const lone = await json(
        'post',
        TRACKERS,
        `{"name":"surrogate \\ud800 x","production_run_id":${w.runA.id}}`,
        w.admin.auth,
      );
      expect422(lone, [{ field: 'name', message: MALFORMED }]);
      const loneLow = await json(
        'post',
        TRACKERS,
        `{"name":"ok","production_run_id":${w.runA.id},"notes":"\\udc00"}`,
        w.admin.auth,
      );
      expect422(loneLow, [{ field: 'notes', message: MALFORMED }]);
      const pair = await json(
        'post',
        TRACKERS,
        `{"name":"surrogate \\ud83d\\ude00","production_run_id":${w.runA.id}}`,
        w.admin.auth,
      );
      expect(pair.status).toBe(201);
      expect(pair.body.name).toBe('surrogate 😀');
    });

    it('raw bytes that are not UTF-8 in a JSON body are 422, not stored as U+FFFD', async () => {
      const body = Buffer.concat([
        Buffer.from(`{"name":"bad `),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`","production_run_id":${w.runA.id}}`),
      ]);
      const res = await t
        .http()
        .post(TRACKERS)
        .set(w.admin.auth)
        .set('Content-Type', 'application/json')
        .serialize(() => body as unknown as string)
        .send(body);
      expect422(res, [{ field: 'body', message: 'malformed JSON' }]);
      expect(await countRows(t.db, 'trackers', "name LIKE 'bad %'")).toBe(0);
    });
  });
});
