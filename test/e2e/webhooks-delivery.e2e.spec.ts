import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { eventually, mailWorld, newTracker, setStatus, sleep, type MailWorld } from '../support/mail.js';
import {
  createWebhook,
  deliveriesOf,
  TestReceiver,
  verify,
  webhookEnv,
  WEBHOOKS,
  type ReceivedRequest,
} from '../support/webhooks.js';

/**
 * Webhook deliveries against real receivers (node http on 127.0.0.1): signed per Standard Webhooks
 * (verified with the `standardwebhooks` package), retried with one webhook-id, 410 and 24 hours of
 * failures disable, scoping by the owner's visibility at the event's time, secret rotation.
 */
describe('webhooks: delivery', () => {
  let t: TestApp;
  let w: MailWorld;
  let admin: CreatedUser;
  const receivers: TestReceiver[] = [];

  const receiver = async (script?: Parameters<typeof TestReceiver.start>[0]) => {
    const r = await TestReceiver.start(script);
    receivers.push(r);
    return r;
  };
  const changeStatus = async (world = w, status = 'DELIVERED') => {
    const tracker = await newTracker(t, world);
    await setStatus(t, world, tracker.id, status);
    return tracker;
  };
  const deliveryRows = (webhookId: number) =>
    t.db.query(`SELECT id::text, status, attempts FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`, [
      webhookId,
    ]);

  beforeAll(async () => {
    t = await createTestApp({ env: webhookEnv() });
    w = await mailWorld(t);
    admin = await t.factories.admin();
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await closeApps(t);
  });

  it('503 twice then 200: three attempts with one webhook-id, each signature valid, then succeeded in the log', async () => {
    const r = await receiver((_: ReceivedRequest, i: number) => ({ status: i < 2 ? 503 : 200, body: 'busy' }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const tracker = await changeStatus();
    const requests = await r.waitFor(3);
    expect(new Set(requests.map((q) => q.id)).size).toBe(1);
    for (const request of requests) {
      expect(verify(hook.secret, request)).toMatchObject({ type: 'tracker.status_changed' });
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.body).toBe(requests[0].body);
    }
    const body = JSON.parse(requests[0].body);
    expect(body).toEqual({
      type: 'tracker.status_changed',
      timestamp: body.data.occurred_at,
      data: expect.objectContaining({
        type: 'tracker.status_changed',
        tracker_id: tracker.id,
        client_id: w.clientId,
        from_status: 'CREATED',
        to_status: 'DELIVERED',
        source: 'manual',
      }),
    });
    const [delivery] = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(delivery).toMatchObject({
      id: Number(requests[0].id),
      webhook_id: hook.id,
      event_type: 'tracker.status_changed',
      event_id: body.data.id,
      attempts: 3,
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });
    expect(delivery.last_attempt_at).toEqual(expect.any(String));
    await sleep(300);
    expect(r.requests).toHaveLength(3);
    const metrics = (await t.http().get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/^webhook_deliveries_succeeded_total [1-9]/m);
    expect(metrics).toMatch(/^webhook_attempts_total\{result="http_error"\} [2-9]/m);
    expect(metrics).toMatch(/^webhook_delivery_latency_seconds_count [1-9]/m);
    const health = await t.http().get('/api/v1/health/pipeline').set(admin.auth).expect(200);
    expect(health.body.test_steps.check_webhook_delivery).toMatchObject({ success: true, issues: [] });
  });

  it('410 Gone fails the delivery and disables the webhook at once; a disabled webhook gets no new deliveries', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    await r.waitFor(1);
    const webhook = await eventually(
      async () => (await t.http().get(`${WEBHOOKS}/${hook.id}`).set(w.user.auth).expect(200)).body,
      (body) => body.is_active === false,
    );
    expect(webhook.disabled_reason).toMatch(/410 Gone/);
    expect(await deliveriesOf(t, w.user, hook.id)).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 1, response_status: 410 }),
    ]);
    await changeStatus();
    await sleep(500);
    expect(r.requests).toHaveLength(1);
    expect(await deliveryRows(hook.id)).toHaveLength(1);
    const test = await t.http().post(`${WEBHOOKS}/${hook.id}/test`).set(w.user.auth);
    expect([test.status, test.body]).toEqual([409, { detail: 'Webhook is disabled' }]);
  });

  it('24 hours of failures disable the webhook; its pending deliveries wait, and enabling it resumes them', async () => {
    let answer = 500;
    const r = await receiver(() => ({ status: answer }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    await r.waitFor(1);
    await eventually(
      () => t.db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [hook.id]),
      (rows) => rows[0].failing_since !== null,
    );
    // As if the first failure had been a day ago: the next failed attempt disables it.
    await t.db.query(`UPDATE webhooks SET failing_since = now() - interval '25 hours' WHERE id = $1`, [hook.id]);
    const disabled = await eventually(
      async () => (await t.http().get(`${WEBHOOKS}/${hook.id}`).set(w.user.auth).expect(200)).body,
      (body) => body.is_active === false,
    );
    expect(disabled.disabled_reason).toBe('No successful delivery for 24 hours');
    const seen = r.requests.length;
    await sleep(800);
    expect(r.requests).toHaveLength(seen);
    expect(await deliveriesOf(t, w.user, hook.id)).toEqual([expect.objectContaining({ status: 'pending' })]);

    answer = 200;
    const enabled = await t.http().patch(`${WEBHOOKS}/${hook.id}`).set(w.user.auth).send({ is_active: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ is_active: true, disabled_reason: null });
    await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(new Set(r.ids).size).toBe(1);
  });

  it("scoping: a user's webhook gets only its clients' events, a webhook's client_ids narrow further, a deactivated owner's webhooks stop", async () => {
    const other = await mailWorld(t);
    const mine = await receiver();
    const narrowed = await receiver();
    const inactive = await receiver();
    const mineHook = await createWebhook(t, w.user, { url: mine.url });
    const narrowedHook = await createWebhook(t, admin, { url: narrowed.url, client_ids: [other.clientId] });
    const owner = await t.factories.user({ clients: [w.clientId] });
    await createWebhook(t, owner, { url: inactive.url });
    await t.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [owner.id]);

    const otherTracker = await changeStatus(other);
    const myTracker = await changeStatus(w);
    await mine.waitFor(1);
    await narrowed.waitFor(1);
    await sleep(500);
    expect(mine.requests.map((q) => JSON.parse(q.body).data.tracker_id)).toEqual([myTracker.id]);
    expect(narrowed.requests.map((q) => JSON.parse(q.body).data.tracker_id)).toEqual([otherTracker.id]);
    expect(inactive.requests).toHaveLength(0);
    expect(await deliveryRows(mineHook.id)).toHaveLength(1);
    expect(await deliveryRows(narrowedHook.id)).toHaveLength(1);
  });

  it('after a rotation each delivery is signed with both secrets (each verifies), and the test route sends webhook.test', async () => {
    const r = await receiver();
    const hook = await createWebhook(t, w.user, { url: r.url });
    const rotated = await t.http().post(`${WEBHOOKS}/${hook.id}/rotate-secret`).set(w.user.auth).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const queued = await t.http().post(`${WEBHOOKS}/${hook.id}/test`).set(w.user.auth).expect(202);
    expect(queued.body).toMatchObject({
      webhook_id: hook.id,
      event_type: 'webhook.test',
      event_id: null,
      status: 'pending',
    });
    const [request] = await r.waitFor(1);
    expect(request.id).toBe(String(queued.body.id));
    expect(request.signature.split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, request)).toMatchObject({ type: 'webhook.test', data: { webhook_id: hook.id } });
    expect(verify(hook.secret, request)).toMatchObject({ type: 'webhook.test' });
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request)).toThrow();

    // Past the 24 hours, only the new secret signs.
    await t.db.query(`UPDATE webhooks SET previous_secret_until = now() - interval '1 second' WHERE id = $1`, [
      hook.id,
    ]);
    await t.http().post(`${WEBHOOKS}/${hook.id}/test`).set(w.user.auth).expect(202);
    const [, second] = await r.waitFor(2);
    expect(second.signature.split(' ')).toHaveLength(1);
    expect(verify(rotated.body.secret, second)).toBeTruthy();
    expect(() => verify(hook.secret, second)).toThrow();
  });

  it('retry sends a delivery again now with the same webhook-id, whatever its status', async () => {
    const r = await receiver();
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    const [first] = await r.waitFor(1);
    await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    const retried = await t
      .http()
      .post(`${WEBHOOKS}/${hook.id}/deliveries/${first.id}/retry`)
      .set(w.user.auth)
      .expect(202);
    expect(retried.body).toMatchObject({ id: Number(first.id), status: 'pending' });
    const [, again] = await r.waitFor(2);
    expect(again.id).toBe(first.id);
    expect(again.body).toBe(first.body);
    expect(
      await eventually(
        () => deliveriesOf(t, w.user, hook.id),
        (rows) => rows[0]?.status === 'succeeded' && rows[0]?.attempts === 2,
      ),
    ).toHaveLength(1);
    expect(await deliveriesOf(t, w.user, hook.id, '&status=failed')).toEqual([]);
  });
});
