import { ApiKeyUsage } from '../../src/api-keys/api-key-usage.js';
import {
  API_KEYS,
  bearerKey,
  createKey,
  INVALID_CREDENTIALS,
  NOT_ENOUGH_PERMISSIONS,
  xApiKey,
} from '../support/api-keys.js';
import type { TestApp } from '../support/app.js';
import { withinBound } from '../support/eventually.js';
import { report } from '../support/locations.js';
import { createTrackerWorld, postStatus, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const TRACKER_NOT_FOUND = { detail: 'Tracker not found' };

/** The 401 every refused key gets: the same body and challenge as a bad token. */
function expectRefused(res: { status: number; body: unknown; headers: Record<string, string> }): void {
  expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, INVALID_CREDENTIALS, 'Bearer']);
}

describe('API keys: authenticating with a key (scopes, client narrowing, revocation, owner state)', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let trackerA: { id: number };
  let trackerB: { id: number };
  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
    trackerA = await t.factories.tracker({ runId: w.runA.id });
    trackerB = await t.factories.tracker({ runId: w.runB.id });
  });
  afterAll(() => t.close());

  it('accepts the key as X-API-Key and as a bearer credential, acting as its owner', async () => {
    const key = await createKey(t, w.userA.auth);
    const byJwt = await t.http().get(`${TRACKERS}?limit=1000`).set(w.userA.auth).expect(200);
    for (const header of [xApiKey(key.key), bearerKey(key.key)]) {
      const res = await t.http().get(`${TRACKERS}?limit=1000`).set(header).expect(200);
      expect(res.body.items).toEqual(byJwt.body.items);
    }
    await t.http().get(`${TRACKERS}/${trackerA.id}`).set(xApiKey(key.key)).expect(200);
    expect((await t.http().get(`${TRACKERS}/${trackerB.id}`).set(xApiKey(key.key)).expect(404)).body).toEqual(
      TRACKER_NOT_FOUND,
    );
  });

  it('a key with scope read cannot write (403); a write-only key writes but cannot read', async () => {
    const reader = await createKey(t, w.userA.auth, { scopes: ['read'] });
    const writer = await createKey(t, w.userA.auth, { scopes: ['write'] });
    const body = { name: `KEY-${Date.now()}`, production_run_id: w.runA.id };
    const denied = await t.http().post(TRACKERS).set(xApiKey(reader.key)).send(body).expect(403);
    expect(denied.body).toEqual(NOT_ENOUGH_PERMISSIONS);
    const created = await t.http().post(TRACKERS).set(bearerKey(writer.key)).send(body).expect(201);
    await t.http().get(`${TRACKERS}/${created.body.id}`).set(xApiKey(writer.key)).expect(403);
    await t.http().get(`${TRACKERS}/${created.body.id}`).set(xApiKey(reader.key)).expect(200);
    // The owner's role still rules: a user's write key cannot delete a tracker (admin only).
    await t.http().delete(`${TRACKERS}/${created.body.id}`).set(xApiKey(writer.key)).expect(403);
  });

  it("a key with client_ids [A] gets 404 on B's tracker, for an admin owner and for a user who sees both", async () => {
    const both = await t.factories.user({ clients: [w.clientA.id, w.clientB.id] });
    const adminKey = await createKey(t, w.admin.auth, { client_ids: [w.clientA.id] });
    const userKey = await createKey(t, both.auth, { client_ids: [w.clientA.id] });
    await t.http().get(`${TRACKERS}/${trackerB.id}`).set(both.auth).expect(200);
    for (const key of [adminKey, userKey]) {
      await t.http().get(`${TRACKERS}/${trackerA.id}`).set(xApiKey(key.key)).expect(200);
      const hidden = await t.http().get(`${TRACKERS}/${trackerB.id}`).set(xApiKey(key.key)).expect(404);
      expect(hidden.body).toEqual(TRACKER_NOT_FOUND);
      const list = await t.http().get(`${TRACKERS}?limit=1000`).set(xApiKey(key.key)).expect(200);
      const runs = new Set(list.body.items.map((i: { production_run_id: number }) => i.production_run_id));
      expect(runs.has(w.runB.id)).toBe(false);
      expect(runs.has(w.runA.id)).toBe(true);
    }
    // Writing into B through the narrowed key: the run is not found, as for anything invisible.
    const writer = await createKey(t, w.admin.auth, { scopes: ['write'], client_ids: [w.clientA.id] });
    await t
      .http()
      .post(TRACKERS)
      .set(xApiKey(writer.key))
      .send({ name: `B-${Date.now()}`, production_run_id: w.runB.id })
      .expect(404);
    // Health reads the whole system: a narrowed admin key may not.
    await t.http().get('/api/v1/health/pipeline').set(xApiKey(adminKey.key)).expect(403);
  });

  it('a key never calls /api-keys, /auth/* or users routes (403) and keeps working', async () => {
    const key = await createKey(t, w.admin.auth, { scopes: ['read', 'write', 'ingest', 'webhooks'] });
    const as = xApiKey(key.key);
    const calls: [string, () => PromiseLike<{ status: number; body: unknown }>][] = [
      ['GET /api-keys', () => t.http().get(API_KEYS).set(as)],
      [
        'POST /api-keys',
        () =>
          t
            .http()
            .post(API_KEYS)
            .set(as)
            .send({ name: 'x', scopes: ['read'] }),
      ],
      ['GET /api-keys/{id}', () => t.http().get(`${API_KEYS}/${key.id}`).set(as)],
      ['DELETE /api-keys/{id}', () => t.http().delete(`${API_KEYS}/${key.id}`).set(as)],
      ['GET /users/me', () => t.http().get('/api/v1/users/me').set(as)],
      ['GET /users', () => t.http().get('/api/v1/users').set(as)],
      ['PATCH /users/me', () => t.http().patch('/api/v1/users/me').set(as).send({ name: 'x' })],
      ['POST /auth/logout', () => t.http().post('/api/v1/auth/logout').set(as)],
      [
        'POST /auth/login/json',
        () => t.http().post('/api/v1/auth/login/json').set(as).send({ email: 'a@b.c', password: 'x' }),
      ],
    ];
    for (const [route, call] of calls) {
      const res = await call();
      expect([route, res.status, res.body]).toEqual([route, 403, NOT_ENOUGH_PERMISSIONS]);
    }
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    expect((await t.http().get(`${API_KEYS}/${key.id}`).set(w.admin.auth).expect(200)).body.revoked_at).toBeNull();
  });

  it('an ingest key posts location reports for its owner; other scopes cannot', async () => {
    const ingestKey = await createKey(t, w.admin.auth, { user_id: w.ingest.id, scopes: ['ingest'] });
    const readKey = await createKey(t, w.admin.auth, { scopes: ['read', 'write'] });
    const body = { reports: [report(trackerA.id, new Date(Date.now() - 60_000).toISOString())] };
    const res = await t.http().post('/api/v1/locations/reports').set(xApiKey(ingestKey.key)).send(body).expect(200);
    expect(res.body.accepted).toBe(1);
    await t.http().post('/api/v1/locations/reports').set(xApiKey(readKey.key)).send(body).expect(403);
    await t.http().get(TRACKERS).set(xApiKey(ingestKey.key)).expect(403);
    // Narrowed to client A: a report for B's tracker is refused like one for an unknown tracker.
    const narrowed = await createKey(t, w.admin.auth, { scopes: ['ingest'], client_ids: [w.clientA.id] });
    const at = new Date(Date.now() - 30_000).toISOString();
    const mixed = { reports: [report(trackerA.id, at), report(trackerB.id, at)] };
    const answer = await t.http().post('/api/v1/locations/reports').set(xApiKey(narrowed.key)).send(mixed).expect(200);
    expect([answer.body.accepted, answer.body.rejected.length]).toEqual([1, 1]);
  });

  it('a revoked key answers 401 at once, also where answers are served before routing', async () => {
    const key = await createKey(t, w.userA.auth);
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    await t.http().delete(`${API_KEYS}/${key.id}`).set(w.userA.auth).expect(200);
    expectRefused(await t.http().get(TRACKERS).set(xApiKey(key.key)));
    expectRefused(await t.http().get(TRACKERS).set(bearerKey(key.key)));
  });

  it('unknown and malformed keys answer 401 "Could not validate credentials"', async () => {
    const key = await createKey(t, w.userA.auth);
    const wrongSecret = key.key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
    expectRefused(await t.http().get(TRACKERS).set(xApiKey(wrongSecret)));
    expectRefused(await t.http().get(TRACKERS).set(xApiKey('not-a-key')));
    expectRefused(await t.http().get(TRACKERS).set(bearerKey('tps_short_x')));
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
  });

  it('an expired key answers 401', async () => {
    const key = await createKey(t, w.userA.auth, { expires_at: new Date(Date.now() + 1500).toISOString() });
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    const after = await withinBound(
      () => t.http().get(TRACKERS).set(xApiKey(key.key)),
      (res) => res.status !== 200,
      10_000,
    );
    expectRefused(after);
  });

  it("a deactivated owner's key answers 401 and works again after reactivation", async () => {
    const owner = await t.factories.user({ clients: [w.clientA.id] });
    const key = await createKey(t, owner.auth);
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    await t.http().patch(`/api/v1/users/${owner.id}`).set(w.admin.auth).send({ is_active: false }).expect(200);
    expectRefused(await t.http().get(TRACKERS).set(xApiKey(key.key)));
    await t.http().patch(`/api/v1/users/${owner.id}`).set(w.admin.auth).send({ is_active: true }).expect(200);
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    // The owner's current clients apply: without client A the tracker is not found.
    await t.http().patch(`/api/v1/users/${owner.id}`).set(w.admin.auth).send({ client_list: [] }).expect(200);
    await t.http().get(`${TRACKERS}/${trackerA.id}`).set(xApiKey(key.key)).expect(404);
  });

  it('records last_used_at (batched; flushed here instead of waiting for the timer)', async () => {
    const key = await createKey(t, w.userA.auth);
    const before = Date.now();
    await t.app.get(ApiKeyUsage).flush();
    expect((await t.http().get(`${API_KEYS}/${key.id}`).set(w.userA.auth).expect(200)).body.last_used_at).toBeNull();
    await t.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    await t.app.get(ApiKeyUsage).flush();
    const used = (await t.http().get(`${API_KEYS}/${key.id}`).set(w.userA.auth).expect(200)).body.last_used_at;
    expect(Date.parse(used)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(used)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('the inbox of a key narrowed to clients holds only those clients’ notifications', async () => {
    type Item = { id: string; event: { tracker_id: number; client_id: number; to_status: string } };
    const both = await t.factories.user({ clients: [w.clientA.id, w.clientB.id] });
    const tA = await t.factories.tracker({ runId: w.runA.id });
    const tB = await t.factories.tracker({ runId: w.runB.id });
    await postStatus(t, w, tA.id);
    await postStatus(t, w, tB.id);
    const key = await createKey(t, both.auth, { scopes: ['read', 'write'], client_ids: [w.clientA.id] });
    const all: Item[] = (await t.http().get('/api/v1/notifications').set(both.auth).expect(200)).body.items;
    const moved = (items: Item[]) =>
      items.filter((n) => n.event.to_status === 'IN_TRANSIT').map((n) => n.event.tracker_id);
    expect(moved(all).sort()).toEqual([tA.id, tB.id].sort());
    const narrowed: Item[] = (await t.http().get('/api/v1/notifications').set(xApiKey(key.key)).expect(200)).body.items;
    expect(moved(narrowed)).toEqual([tA.id]);
    expect(narrowed.every((n) => n.event.client_id === w.clientA.id)).toBe(true);
    const unread = await t.http().get('/api/v1/notifications/unread-count').set(xApiKey(key.key)).expect(200);
    expect(unread.body).toEqual({ unread: narrowed.length });
    const ofB = all.find((n) => n.event.tracker_id === tB.id)!;
    await t.http().post(`/api/v1/notifications/${ofB.id}/read`).set(xApiKey(key.key)).expect(404);
    const marked = await t.http().post('/api/v1/notifications/read-all').set(xApiKey(key.key)).expect(200);
    expect(marked.body).toEqual({ updated: narrowed.length });
    const left = await t.http().get('/api/v1/notifications/unread-count').set(both.auth).expect(200);
    expect(left.body).toEqual({ unread: all.length - narrowed.length });
  });
});
