import { randomUUID } from 'node:crypto';
import { createPeerApp, createTestApp, redisAvailable, type TestApp } from '../support/app.js';

const LOGIN_JSON = '/api/v1/auth/login/json';
const THROTTLED = { detail: 'Too many login attempts. Try again later.' };

let ipSeq = 0;
/** A fresh proxy-appended address per burst, so the per-IP counters never mix. */
const proxyAddress = () => `198.51.100.${200 + ++ipSeq}`;

/** `n` parallel logins with distinct unknown e-mails from one client address, spread over `apps`. */
async function burst(apps: TestApp[], ip: string, n: number): Promise<Record<number, number>> {
  const responses = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      apps[i % apps.length]
        .http()
        .post(LOGIN_JSON)
        .set('X-Forwarded-For', ip)
        .send({ email: `burst-${i}-${randomUUID()}@example.com`, password: 'wrong-pass' }),
    ),
  );
  for (const res of responses) {
    if (res.status === 429) {
      expect(res.body).toEqual(THROTTLED);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } else expect(res.body).toEqual({ detail: 'Incorrect email or password' });
  }
  const counts: Record<number, number> = {};
  for (const res of responses) counts[res.status] = (counts[res.status] ?? 0) + 1;
  return counts;
}

describe.each([
  ['in-process counters (no Redis)', false],
  ...(redisAvailable ? [['Redis counters', true] as [string, boolean]] : []),
])('Auth: the per-IP limit holds under concurrency, %s', (_label, redis) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ redis, env: { NODE_ENV: 'production', TRUST_PROXY: 'true' } });
  });
  afterAll(() => t.close());

  it('200 parallel failed logins from one IP: exactly 20 are checked, the rest are 429', async () => {
    const ip = proxyAddress();
    expect(await burst([t], ip, 200)).toEqual({ 401: 20, 429: 180 });
    // The limit stays reached: even the right password of a real user is refused from that address.
    const user = await t.factories.user();
    const after = await t
      .http()
      .post(LOGIN_JSON)
      .set('X-Forwarded-For', ip)
      .send({ email: user.email, password: user.password });
    expect([after.status, after.body]).toEqual([429, THROTTLED]);
    // Refused attempts did not touch the e-mail counters: the user logs in from elsewhere.
    await t
      .http()
      .post(LOGIN_JSON)
      .set('X-Forwarded-For', proxyAddress())
      .send({ email: user.email, password: user.password })
      .expect(200);
  });

  it('successful logins still do not count against the IP, also when interleaved with failures', async () => {
    const user = await t.factories.user();
    const ip = proxyAddress();
    for (let i = 0; i < 25; i++) {
      await t
        .http()
        .post(LOGIN_JSON)
        .set('X-Forwarded-For', ip)
        .send({ email: user.email, password: user.password })
        .expect(200);
    }
    expect(await burst([t], ip, 20)).toEqual({ 401: 20 });
    expect(await burst([t], ip, 5)).toEqual({ 429: 5 });
  });

  (redis ? it : it.skip)('two instances sharing Redis hold one limit between them', async () => {
    const other = await createPeerApp(t, { env: { NODE_ENV: 'production', TRUST_PROXY: 'true' } });
    try {
      expect(await burst([t, other], proxyAddress(), 120)).toEqual({ 401: 20, 429: 100 });
    } finally {
      await other.close();
    }
  });
});
