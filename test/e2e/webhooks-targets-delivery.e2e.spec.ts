import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { eventually, sleep } from '../support/mail.js';
import { createWebhook, deliveriesOf, TestReceiver, webhookEnv, WEBHOOKS } from '../support/webhooks.js';

const REFUSED = 'is a loopback, private, link-local or unspecified address';

/**
 * Webhook targets are checked again at delivery time in production (DNS can change after the URL
 * was accepted): a webhook whose URL now points at a loopback address — set in the database, as
 * the API refuses it — gets its delivery refused, recorded in the log and counted, and the
 * receiver listening there is never reached. The only app on this database is in production mode
 * (an app outside production, or with WEBHOOK_ALLOW_PRIVATE_TARGETS, would deliver it).
 */
describe('webhooks: targets refused at delivery time in production', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let r: TestReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: webhookEnv({ NODE_ENV: 'production' }) });
    admin = await t.factories.admin();
    r = await TestReceiver.start();
  });
  afterAll(async () => {
    await r.close();
    await closeApps(t);
  });

  it.each([
    ['a loopback address', (port: string) => `http://127.0.0.1:${port}/hook`, `refused: 127.0.0.1 ${REFUSED}`],
    [
      'a host name resolving to loopback',
      (port: string) => `http://localhost:${port}/hook`,
      'refused: a loopback, private, link-local or unspecified address (localhost is or resolves to ',
    ],
  ])('refuses %s: the delivery records the refusal, the receiver is never hit', async (_name, url, error) => {
    const port = new URL(r.url).port;
    // A public target passes the API's check; the URL is then changed under it (as DNS could).
    const hook = await createWebhook(t, admin, { url: 'https://1.1.1.1/hook' });
    await t.db.query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [hook.id, url(port)]);
    const queued = await t.http().post(`${WEBHOOKS}/${hook.id}/test`).set(admin.auth).expect(202);
    const [delivery] = await eventually(
      () => deliveriesOf(t, admin, hook.id),
      (rows) => (rows[0]?.attempts as number) >= 2,
    );
    expect(delivery).toMatchObject({ id: queued.body.id, status: 'pending', response_status: null });
    expect(delivery.error).toContain(error);
    await sleep(300);
    expect(r.requests).toHaveLength(0);
    const metrics = (await t.http().get('/metrics').set(admin.auth).expect(200)).text;
    expect(metrics).toMatch(/^webhook_attempts_total\{result="refused"\} [1-9]/m);
    await t.http().delete(`${WEBHOOKS}/${hook.id}`).set(admin.auth).expect(200);
  });
});
