import { API_KEYS, createKey, xApiKey } from '../support/api-keys.js';
import { closeApps, createPeerApp, type TestApp } from '../support/app.js';
import { withinBound } from '../support/eventually.js';
import { createTwoInstances, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/** What the rules allow another instance: a change is honoured there within 1 s. */
const PROPAGATION_BOUND_MS = 1000;

describe('API keys on two instances: revocation and owner changes reach the other within 1 s', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;
  beforeAll(async () => ({ a, b, w } = await createTwoInstances()));
  afterAll(() => closeApps(b, a));

  /** B answers `status` for the key within the bound after `change` ran on A (B had the key cached). */
  async function honouredOnB(key: string, change: () => Promise<unknown>, status: number): Promise<void> {
    await b.http().get(TRACKERS).set(xApiKey(key)).expect(200);
    await b.http().get(TRACKERS).set(xApiKey(key)).expect(200);
    await change();
    // withinBound reads until the answer changes or the bound has passed: the last reading is the verdict.
    const res = await withinBound(
      () => b.http().get(TRACKERS).set(xApiKey(key)),
      (r) => r.status === status,
      PROPAGATION_BOUND_MS,
    );
    expect(res.status).toBe(status);
  }

  it('a key revoked on A answers 401 on A at once and on B within 1 s', async () => {
    const key = await createKey(a, w.userA.auth);
    await honouredOnB(
      key.key,
      async () => {
        await a.http().delete(`${API_KEYS}/${key.id}`).set(w.userA.auth).expect(200);
        await a.http().get(TRACKERS).set(xApiKey(key.key)).expect(401);
      },
      401,
    );
  });

  it('a key revoked in the database by hand (no instance involved) stops on both', async () => {
    const key = await createKey(a, w.userA.auth);
    await a.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    await honouredOnB(key.key, () => a.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]), 401);
    const onA = await withinBound(
      () => a.http().get(TRACKERS).set(xApiKey(key.key)),
      (r) => r.status === 401,
    );
    expect(onA.status).toBe(401);
  });

  it("the owner's deactivation on A stops the key on B within 1 s; reactivation restores it", async () => {
    const owner = await a.factories.user({ clients: [w.clientA.id] });
    const key = await createKey(a, owner.auth);
    const setActive = (isActive: boolean) =>
      a.http().patch(`/api/v1/users/${owner.id}`).set(w.admin.auth).send({ is_active: isActive }).expect(200);
    await honouredOnB(key.key, () => setActive(false), 401);
    await setActive(true);
    const back = await withinBound(
      () => b.http().get(TRACKERS).set(xApiKey(key.key)),
      (r) => r.status === 200,
    );
    expect(back.status).toBe(200);
  });

  it('an instance records its keys’ last use when it shuts down', async () => {
    const key = await createKey(a, w.userA.auth);
    const c = await createPeerApp(a);
    try {
      await c.http().get(TRACKERS).set(xApiKey(key.key)).expect(200);
    } finally {
      await c.close();
    }
    const [row] = await a.db.query('SELECT last_used_at FROM api_keys WHERE id = $1', [key.id]);
    expect(row.last_used_at).toBeInstanceOf(Date);
  });
});
