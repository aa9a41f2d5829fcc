import { NearCache } from '../../src/infrastructure/cache/near-cache.js';
import { closeApps, redisAvailable, type TestApp } from '../support/app.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { createTwoInstances, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const ME = '/api/v1/users/me';
const USERS = '/api/v1/users';
/** What the rules allow another instance: a change is honoured there within 1 s. */
const PROPAGATION_BOUND_MS = 1000;

/**
 * Polls `check` until it holds; answers the milliseconds it took from `since`. Fails (by returning
 * the elapsed time of the last attempt) after `limitMs`, so the caller's bound assertion fails.
 */
async function honouredWithin(since: number, check: () => Promise<boolean>, limitMs = 5000): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - since;
    if (performance.now() - since > limitMs) return performance.now() - since;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The request was answered from B's in-process tier (its hit counter moved). */
async function servedFromNearTier(app: TestApp, run: () => Promise<unknown>): Promise<boolean> {
  const near = app.app.get(NearCache);
  const before = near.stats.hits;
  await run();
  return near.stats.hits > before;
}

describe('In-process cache tier: two instances on one database (and one Redis when set)', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ a, b, w } = await createTwoInstances()));
  afterAll(() => closeApps(b, a));

  it('both instances serve the user row, revocations and list pages from the in-process tier', async () => {
    expect(b.app.get(NearCache).enabled).toBe(true);
    await b.http().get(ME).set(w.userA.auth).expect(200);
    expect(await servedFromNearTier(b, () => b.http().get(ME).set(w.userA.auth).expect(200))).toBe(true);
    await b.http().get(TRACKERS).set(w.userA.auth).expect(200);
    const again = await b.http().get(TRACKERS).set(w.userA.auth).expect(200);
    expect(again.headers['x-cache']).toBe('HIT');
  });

  it('a role change on A is honoured by B within 1 s', async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    await b.http().get(TRACKERS).set(user.auth).expect(200);
    expect(await servedFromNearTier(b, () => b.http().get(TRACKERS).set(user.auth).expect(200))).toBe(true);
    const changed = performance.now();
    await a
      .http()
      .patch(`${USERS}/${user.id}`)
      .set(w.admin.auth)
      .send({ roles: ['ingest'] })
      .expect(200);
    // The instance that made the change honours it at once.
    await a.http().get(TRACKERS).set(user.auth).expect(403);
    const ms = await honouredWithin(changed, async () => (await b.http().get(TRACKERS).set(user.auth)).status === 403);
    expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
    expect((await b.http().get(ME).set(user.auth).expect(200)).body.roles).toEqual(['ingest']);
  });

  it('a client_list change on A is honoured by B within 1 s (scope of lists and reads)', async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    const tracker = await a.factories.tracker({ runId: w.runA.id, name: `scoped-${Date.now()}` });
    await b.http().get(`${TRACKERS}/${tracker.id}`).set(user.auth).expect(200);
    const listed = async () =>
      (await b.http().get(`${TRACKERS}?production_run_id=${w.runA.id}&limit=1000`).set(user.auth)).body.total as number;
    expect(await listed()).toBeGreaterThan(0);
    const changed = performance.now();
    await a
      .http()
      .patch(`${USERS}/${user.id}`)
      .set(w.admin.auth)
      .send({ client_list: [w.clientB.id] })
      .expect(200);
    const ms = await honouredWithin(
      changed,
      async () => (await b.http().get(`${TRACKERS}/${tracker.id}`).set(user.auth)).status === 404,
    );
    expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
    expect(await listed()).toBe(0);
    expect((await b.http().get(ME).set(user.auth).expect(200)).body.client_list).toEqual([w.clientB.id]);
  });

  it('a deactivation and a delete on A are honoured by B within 1 s', async () => {
    for (const change of ['deactivate', 'delete'] as const) {
      const user = await a.factories.user({ clients: [w.clientA.id] });
      await b.http().get(ME).set(user.auth).expect(200);
      expect(await servedFromNearTier(b, () => b.http().get(ME).set(user.auth).expect(200))).toBe(true);
      const changed = performance.now();
      if (change === 'deactivate')
        await a.http().patch(`${USERS}/${user.id}`).set(w.admin.auth).send({ is_active: false }).expect(200);
      else await a.http().delete(`${USERS}/${user.id}`).set(w.admin.auth).expect(200);
      await a.http().get(ME).set(user.auth).expect(401);
      const ms = await honouredWithin(changed, async () => (await b.http().get(ME).set(user.auth)).status === 401);
      expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
    }
  });

  it('a logout on A (revocation) and a password change are honoured by B within 1 s', async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    const login = async () => {
      const res = await a
        .http()
        .post('/api/v1/auth/login/json')
        .send({ email: user.email, password: user.password })
        .expect(200);
      return { Authorization: `Bearer ${res.body.access_token as string}` };
    };
    const session = await login();
    await b.http().get(ME).set(session).expect(200);
    expect(await servedFromNearTier(b, () => b.http().get(ME).set(session).expect(200))).toBe(true);
    let changed = performance.now();
    await a.http().post('/api/v1/auth/logout').set(session).expect(200);
    await a.http().get(ME).set(session).expect(401);
    let ms = await honouredWithin(changed, async () => (await b.http().get(ME).set(session)).status === 401);
    expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);

    const other = await login();
    await b.http().get(ME).set(other).expect(200);
    changed = performance.now();
    await a
      .http()
      .patch(ME)
      .set(other)
      .send({ password: 'a-new-password-1', current_password: user.password })
      .expect(200);
    ms = await honouredWithin(changed, async () => (await b.http().get(ME).set(other)).status === 401);
    expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
  });

  it('a write on A that invalidates a tracker list is honoured by B within 1 s', async () => {
    const q = `${TRACKERS}?production_run_id=${w.runA2.id}&include_latest_location=true`;
    await b.http().get(q).set(w.admin.auth).expect(200);
    const before = await b.http().get(q).set(w.admin.auth).expect(200);
    expect(before.headers['x-cache']).toBe('HIT');
    const changed = performance.now();
    const created = await a
      .http()
      .post(TRACKERS)
      .set(w.admin.auth)
      .send({ name: `near-${Date.now()}`, production_run_id: w.runA2.id })
      .expect(201);
    const ms = await honouredWithin(changed, async () =>
      ((await b.http().get(q).set(w.admin.auth)).body.items as { id: number }[]).some((i) => i.id === created.body.id),
    );
    expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);
  });
});

const describeWithRedis = redisAvailable ? describe : describe.skip;

describeWithRedis('In-process cache tier with Redis down', () => {
  const TTL_SECONDS = 2;
  let proxy: FaultProxy;
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => {
    proxy = await FaultProxy.forUrl(process.env.REDIS_URL as string);
    const env = {
      REDIS_URL: proxy.rewrite(process.env.REDIS_URL as string),
      NEAR_CACHE_TTL_SECONDS: String(TTL_SECONDS),
    };
    ({ a, b, w } = await createTwoInstances({ redis: true, env }));
  });
  afterAll(async () => {
    await closeApps(b, a);
    await proxy?.close();
  });

  it('nothing fails, no entry outlives its TTL, and changes still reach the other instance within 1 s', async () => {
    const q = `${TRACKERS}?production_run_id=${w.runB.id}`;
    const names = async (app: TestApp) => {
      const res = await app.http().get(q).set(w.admin.auth);
      expect(res.status).toBe(200);
      return (res.body.items as { name: string }[]).map((i) => i.name);
    };
    await names(b);
    await proxy.cut();

    // A row written behind the service's back (no invalidation at all): only the TTL ends the old entry.
    await names(b);
    const sideways = `sideways-${Date.now()}`;
    await a.factories.tracker({ runId: w.runB.id, name: sideways });
    const inserted = performance.now();
    const staleFor = await honouredWithin(
      inserted,
      async () => (await names(b)).includes(sideways),
      TTL_SECONDS * 1000 + 3000,
    );
    expect(staleFor).toBeLessThan(TTL_SECONDS * 1000 + 500);

    // Writes through the service still invalidate on every instance (the channel is PostgreSQL's).
    await names(b);
    const changed = performance.now();
    const created = await a
      .http()
      .post(TRACKERS)
      .set(w.admin.auth)
      .send({ name: `redis-down-${Date.now()}`, production_run_id: w.runB.id })
      .expect(201);
    const ms = await honouredWithin(changed, async () => (await names(b)).includes(created.body.name as string));
    expect(ms).toBeLessThan(PROPAGATION_BOUND_MS);

    const user = await a.factories.user({ clients: [w.clientB.id] });
    await b.http().get(ME).set(user.auth).expect(200);
    const deactivated = performance.now();
    await a.http().patch(`${USERS}/${user.id}`).set(w.admin.auth).send({ is_active: false }).expect(200);
    expect(
      await honouredWithin(deactivated, async () => (await b.http().get(ME).set(user.auth)).status === 401),
    ).toBeLessThan(PROPAGATION_BOUND_MS);
    await proxy.pass();
  });
});
