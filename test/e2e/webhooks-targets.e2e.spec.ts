import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { WEBHOOKS } from '../support/webhooks.js';

const STATUS = ['tracker.status_changed'];
const REFUSED = 'must not target a loopback, private, link-local or unspecified address';

/** Webhook targets in production: https only, and no host that is or resolves to a non-public address. */
describe('webhooks: targets in production', () => {
  let t: TestApp;
  let allowed: TestApp;
  let admin: CreatedUser;

  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: 'production' } });
    allowed = await createTestApp({
      database: t.database,
      cachePrefix: t.config.cachePrefix,
      env: { NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    });
    admin = await t.factories.admin();
  });
  afterAll(() => closeApps(allowed, t));

  it('refuses http://, and hosts that are or resolve to loopback, private, link-local or unspecified addresses', async () => {
    const cases: [string, string][] = [
      ['http://example.com/hook', 'must be an https:// URL (http:// is accepted only outside production)'],
      ['https://127.0.0.1/hook', `${REFUSED} (127.0.0.1 is or resolves to 127.0.0.1)`],
      ['https://localhost/hook', `${REFUSED} (localhost is or resolves to `],
      ['https://10.1.2.3/hook', '(10.1.2.3 is'],
      ['https://192.168.0.10/hook', '(192.168.0.10 is'],
      ['https://169.254.169.254/latest/meta-data', '(169.254.169.254 is'],
      ['https://0.0.0.0/hook', '(0.0.0.0 is'],
      ['https://[::1]/hook', '(::1 is'],
      ['https://[::ffff:127.0.0.1]/hook', '(::ffff:7f00:1 is'],
      ['https://[fe80::1]/hook', '(fe80::1 is'],
      ['https://2130706433/hook', '(127.0.0.1 is'],
    ];
    for (const [url, message] of cases) {
      const res = await t.http().post(WEBHOOKS).set(admin.auth).send({ url, event_types: STATUS });
      expect([url, res.status]).toEqual([url, 422]);
      expect(res.body.errors[0].field).toBe('url');
      expect(res.body.errors[0].message).toContain(message);
    }
    const tooLong = await t
      .http()
      .post(WEBHOOKS)
      .set(admin.auth)
      .send({ url: `https://1.1.1.1/${'a'.repeat(2000)}`, event_types: STATUS });
    expect(tooLong.body.errors[0]).toEqual({ field: 'url', message: 'must be at most 2000 characters' });
  });

  it('accepts a public https target, and private ones with WEBHOOK_ALLOW_PRIVATE_TARGETS=true', async () => {
    await t
      .http()
      .post(WEBHOOKS)
      .set(admin.auth)
      .send({ url: 'https://1.1.1.1/hook', event_types: STATUS })
      .expect(201);
    await allowed
      .http()
      .post(WEBHOOKS)
      .set(admin.auth)
      .send({ url: 'https://127.0.0.1/hook', event_types: STATUS })
      .expect(201);
    const plain = await allowed
      .http()
      .post(WEBHOOKS)
      .set(admin.auth)
      .send({ url: 'http://127.0.0.1/hook', event_types: STATUS });
    expect(plain.status).toBe(422);
  });
});
