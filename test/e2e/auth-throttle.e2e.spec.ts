import { randomUUID } from 'node:crypto';
import { createPeerApp, createTestApp, redisAvailable, type TestApp } from '../support/app.js';

const LOGIN_JSON = '/api/v1/auth/login/json';
const LOGIN = '/api/v1/auth/login';
const THROTTLED = { detail: 'Too many login attempts. Try again later.' };
const INCORRECT = { detail: 'Incorrect email or password' };

/** Each test uses its own proxy-appended (right-most) address so the per-IP counters never mix. */
let ipSeq = 0;
const proxyAddress = () => `198.51.100.${++ipSeq}`;
/** What a client sends + what our (one trusted) proxy appends. */
const xff = (spoofed: string, proxyAppended: string) => ({ 'X-Forwarded-For': `${spoofed}, ${proxyAppended}` });

function expectThrottled(res: { status: number; body: unknown; headers: Record<string, string> }): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual(THROTTLED);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(15 * 60);
}

describe('Auth: login throttling behind a proxy (TRUST_PROXY=true)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: 'true' } });
  });
  afterAll(() => t.close());

  it('refuses the 6th attempt for one e-mail (even with the right password), whatever X-Forwarded-For says', async () => {
    const user = await t.factories.user();
    const ip = proxyAddress();
    for (let i = 1; i <= 5; i++) {
      const res = await t
        .http()
        .post(LOGIN_JSON)
        .set(xff(`10.0.0.${i}`, ip))
        .send({ email: user.email, password: 'wrong-password' });
      expect([res.status, res.body]).toEqual([401, INCORRECT]);
    }
    expectThrottled(
      await t.http().post(LOGIN_JSON).set(xff('10.9.9.9', ip)).send({ email: user.email, password: user.password }),
    );
    // Another address, another encoding, another spelling of the e-mail: the same per-e-mail counter.
    expectThrottled(
      await t
        .http()
        .post(LOGIN)
        .type('form')
        .set(xff('10.0.0.1', proxyAddress()))
        .send({ username: ` ${user.email.toUpperCase()} `, password: user.password }),
    );
  });

  it('resets the per-e-mail counter on a successful login', async () => {
    const user = await t.factories.user();
    const ip = proxyAddress();
    const attempt = (password: string) =>
      t.http().post(LOGIN_JSON).set(xff('10.0.0.1', ip)).send({ email: user.email, password });
    for (let i = 0; i < 4; i++) expect((await attempt('wrong-password')).status).toBe(401);
    expect((await attempt(user.password)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await attempt('wrong-password')).status).toBe(401);
    expectThrottled(await attempt(user.password));
  });

  it('throttles unknown e-mails exactly like known ones (no existence leak)', async () => {
    const email = `ghost-${randomUUID()}@example.com`;
    const ip = proxyAddress();
    for (let i = 0; i < 5; i++)
      expect(
        (await t.http().post(LOGIN_JSON).set(xff('10.0.0.1', ip)).send({ email, password: 'whatever1' })).status,
      ).toBe(401);
    expectThrottled(await t.http().post(LOGIN_JSON).set(xff('10.0.0.1', ip)).send({ email, password: 'whatever1' }));
  });

  it('refuses an IP after 20 failures across e-mails, keyed by the proxy-appended address only', async () => {
    const user = await t.factories.user();
    const ip = proxyAddress();
    for (let i = 1; i <= 20; i++) {
      const res = await t
        .http()
        .post(LOGIN_JSON)
        .set(xff(`203.0.113.${i}`, ip))
        .send({ email: `spray-${i}-${randomUUID()}@example.com`, password: 'wrong-pass' });
      expect(res.status).toBe(401);
    }
    // A changed (spoofed) left-most entry does not help: the right-most address is what counts.
    expectThrottled(
      await t.http().post(LOGIN_JSON).set(xff('192.0.2.77', ip)).send({ email: user.email, password: user.password }),
    );
    expectThrottled(
      await t
        .http()
        .post(LOGIN_JSON)
        .set({ 'X-Forwarded-For': ip })
        .send({ email: user.email, password: user.password }),
    );
    // The same user from another client address is not affected (and its e-mail counter was untouched).
    await t
      .http()
      .post(LOGIN_JSON)
      .set(xff('192.0.2.77', proxyAddress()))
      .send({ email: user.email, password: user.password })
      .expect(200);
  });

  it('does not count successful logins against the IP', async () => {
    const user = await t.factories.user();
    const ip = proxyAddress();
    for (let i = 0; i < 22; i++) {
      await t
        .http()
        .post(LOGIN_JSON)
        .set(xff('10.0.0.1', ip))
        .send({ email: user.email, password: user.password })
        .expect(200);
    }
  });

  (redisAvailable ? it : it.skip)('shares the counters between instances through Redis', async () => {
    const other = await createPeerApp(t, { env: { TRUST_PROXY: 'true' } });
    try {
      const user = await t.factories.user();
      for (let i = 0; i < 5; i++) {
        const app = i % 2 === 0 ? t : other;
        expect(
          (
            await app
              .http()
              .post(LOGIN_JSON)
              .set(xff('10.0.0.1', proxyAddress()))
              .send({ email: user.email, password: 'wrong-pass' })
          ).status,
        ).toBe(401);
      }
      expectThrottled(
        await other
          .http()
          .post(LOGIN_JSON)
          .set(xff('10.0.0.1', proxyAddress()))
          .send({ email: user.email, password: user.password }),
      );
      expectThrottled(
        await t
          .http()
          .post(LOGIN_JSON)
          .set(xff('10.0.0.1', proxyAddress()))
          .send({ email: user.email, password: user.password }),
      );
    } finally {
      await other.close();
    }
  });
});

describe('Auth: login throttling without a working store', () => {
  it('never fails with 5xx and still throttles (per instance) when Redis is unreachable', async () => {
    const t = await createTestApp({ redis: true, env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const user = await t.factories.user();
      for (let i = 0; i < 5; i++) {
        const res = await t.http().post(LOGIN_JSON).send({ email: user.email, password: 'wrong-pass' });
        expect([res.status, res.body]).toEqual([401, INCORRECT]);
      }
      expectThrottled(await t.http().post(LOGIN_JSON).send({ email: user.email, password: user.password }));
      const other = await t.factories.user();
      await t.http().post(LOGIN_JSON).send({ email: other.email, password: other.password }).expect(200);
    } finally {
      await t.close();
    }
  });
});
