import { createKey, INVALID_CREDENTIALS, NOT_ENOUGH_PERMISSIONS, xApiKey } from '../support/api-keys.js';
import { closeApps, createPeerApp, redisAvailable, type TestApp } from '../support/app.js';
import { withinBound } from '../support/eventually.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const THROTTLED = { detail: 'Too many failed API key attempts. Try again later.' };
/** Each test uses its own proxy-appended address (TRUST_PROXY=true) so the per-IP counters never mix. */
let ipSeq = 0;
const nextIp = () => ({ 'X-Forwarded-For': `203.0.113.${++ipSeq}` });

function expectThrottled(res: { status: number; body: unknown; headers: Record<string, string> }): void {
  expect([res.status, res.body]).toEqual([429, THROTTLED]);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
}

describe('API keys: throttling of failed key attempts per IP', () => {
  let t: TestApp;
  let peer: TestApp;
  let w: TrackerWorld;
  const env = { TRUST_PROXY: 'true' };
  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env }));
    peer = await createPeerApp(t, { env });
  });
  afterAll(() => closeApps(peer, t));

  it('answers the first 20 bad keys 401, then 429 with Retry-After for every key from that IP; JWTs unaffected', async () => {
    const good = await createKey(t, w.userA.auth);
    const ip = nextIp();
    for (let i = 1; i <= 20; i++) {
      const res = await t
        .http()
        .get(TRACKERS)
        .set(ip)
        .set(xApiKey(`tps_unknown${i % 10}_${'x'.repeat(40)}`));
      expect([i, res.status, res.body]).toEqual([i, 401, INVALID_CREDENTIALS]);
    }
    expectThrottled(
      await t
        .http()
        .get(TRACKERS)
        .set(ip)
        .set(xApiKey('tps_aaaaaaaa_' + 'b'.repeat(40))),
    );
    // A good key from that IP waits too, on this instance and (counters shared in Redis, within the
    // bus's second) on the other.
    expectThrottled(await t.http().get(TRACKERS).set(ip).set(xApiKey(good.key)));
    if (redisAvailable) {
      const onPeer = await withinBound(
        () => peer.http().get(TRACKERS).set(ip).set(xApiKey(good.key)),
        (res) => res.status === 429,
      );
      expectThrottled(onPeer);
    }
    // A JWT from that IP, and a key from another IP, are not affected.
    await t.http().get(TRACKERS).set(ip).set(w.userA.auth).expect(200);
    await t.http().get(TRACKERS).set(nextIp()).set(xApiKey(good.key)).expect(200);
  });

  it('403s (a good key outside its scope) do not count', async () => {
    const readOnly = await createKey(t, w.userA.auth, { scopes: ['read'] });
    const ip = nextIp();
    for (let i = 1; i <= 25; i++) {
      const res = await t.http().post(TRACKERS).set(ip).set(xApiKey(readOnly.key)).send({});
      expect([i, res.status, res.body]).toEqual([i, 403, NOT_ENOUGH_PERMISSIONS]);
    }
    await t.http().get(TRACKERS).set(ip).set(xApiKey(readOnly.key)).expect(200);
  });

  (redisAvailable ? it : it.skip)('failures counted on two instances add up (counters in Redis)', async () => {
    const ip = nextIp();
    for (let i = 1; i <= 20; i++) {
      const app = i % 2 === 0 ? t : peer;
      await app.http().get(TRACKERS).set(ip).set(xApiKey('garbage')).expect(401);
    }
    expectThrottled(await t.http().get(TRACKERS).set(ip).set(xApiKey('garbage')));
    expectThrottled(await peer.http().get(TRACKERS).set(ip).set(xApiKey('garbage')));
  });
});
