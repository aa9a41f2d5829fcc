import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import { eventually, mailWorld, newTracker, setStatus, sleep, type MailWorld } from '../support/mail.js';
import { createWebhook, deliveriesOf, TestReceiver, webhookEnv, WEBHOOKS } from '../support/webhooks.js';

/**
 * Webhook retries against real receivers: a manual retry on a disabled webhook, the end of the 24-hour
 * retry period, enabling a webhook again after some of its deliveries outlived it, and redirects
 * (never followed: a failed attempt).
 */
describe('webhooks: retries', () => {
  let t: TestApp;
  let w: MailWorld;
  const receivers: TestReceiver[] = [];

  const receiver = async (script?: Parameters<typeof TestReceiver.start>[0]) => {
    const r = await TestReceiver.start(script);
    receivers.push(r);
    return r;
  };
  const changeStatus = async () => setStatus(t, w, (await newTracker(t, w)).id);
  const webhookOf = async (id: number) => (await t.http().get(`${WEBHOOKS}/${id}`).set(w.user.auth).expect(200)).body;

  beforeAll(async () => {
    t = await createTestApp({ env: webhookEnv() });
    w = await mailWorld(t);
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await closeApps(t);
  });

  it('a manual retry on a disabled webhook is attempted now; the webhook stays disabled and its other deliveries wait', async () => {
    let answer = 500;
    const r = await receiver(() => ({ status: answer }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    await changeStatus();
    const pending = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'pending' && (row.attempts as number) >= 1),
    );
    await t.http().patch(`${WEBHOOKS}/${hook.id}`).set(w.user.auth).send({ is_active: false }).expect(200);
    await sleep(500); // an attempt in flight at the PATCH ends
    answer = 200;
    const seen = r.requests.length;
    const [retriedId, waitingId] = pending.map((row) => String(row.id));

    const retried = await t
      .http()
      .post(`${WEBHOOKS}/${hook.id}/deliveries/${retriedId}/retry`)
      .set(w.user.auth)
      .expect(202);
    expect(retried.body).toMatchObject({ id: Number(retriedId), status: 'pending' });
    const [again] = (await r.waitFor(seen + 1)).slice(seen);
    expect(again.id).toBe(retriedId);
    const rows = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (list) => list.find((row) => String(row.id) === retriedId)?.status === 'succeeded',
    );
    expect(rows.find((row) => String(row.id) === waitingId)).toMatchObject({ status: 'pending' });
    await sleep(800); // several retry intervals: the other delivery is not sent while disabled
    expect(r.requests.slice(seen).map((q) => q.id)).toEqual([retriedId]);
    expect(await webhookOf(hook.id)).toMatchObject({ is_active: false, disabled_reason: 'Disabled through the API' });

    // A failed manual attempt is one attempt: afterwards the delivery waits like the others.
    answer = 500;
    await t.http().post(`${WEBHOOKS}/${hook.id}/deliveries/${retriedId}/retry`).set(w.user.auth).expect(202);
    await r.waitFor(seen + 2);
    await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (list) => list.find((row) => String(row.id) === retriedId)?.response_status === 500,
    );
    await sleep(800);
    expect(r.requests.slice(seen).map((q) => q.id)).toEqual([retriedId, retriedId]);
    expect(await webhookOf(hook.id)).toMatchObject({ is_active: false });
  });

  it('the 24-hour retry period ends in failed: the next failed attempt after it gives up', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    const [delivery] = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows[0]?.status === 'pending' && (rows[0].attempts as number) >= 1,
    );
    // As if the first attempt had been a day ago.
    await t.db.query(
      `UPDATE webhook_deliveries SET first_attempt_at = now() - interval '24 hours 1 minute' WHERE id = $1`,
      [delivery.id],
    );
    const [failed] = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows[0]?.status === 'failed',
    );
    expect(failed).toMatchObject({ response_status: 500, error: 'HTTP 500: ok', next_attempt_at: null });
    const seen = r.requests.length;
    await sleep(800);
    expect(r.requests).toHaveLength(seen);
    const metrics = (await t.http().get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/^webhook_deliveries_failed_total\{reason="expired"\} [1-9]/m);
    // Failed for good, not the webhook: its failure streak began minutes ago.
    expect(await webhookOf(hook.id)).toMatchObject({ is_active: true });
  });

  it('enabling a webhook fails its pending deliveries older than 24 hours and resumes the younger ones', async () => {
    let answer = 500;
    const r = await receiver(() => ({ status: answer }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    await changeStatus();
    const [young, old] = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'pending' && (row.attempts as number) >= 1),
    );
    await t.http().patch(`${WEBHOOKS}/${hook.id}`).set(w.user.auth).send({ is_active: false }).expect(200);
    await sleep(500);
    await t.db.query(`UPDATE webhook_deliveries SET first_attempt_at = now() - interval '25 hours' WHERE id = $1`, [
      old.id,
    ]);
    answer = 200;
    const seen = r.requests.length;
    await t.http().patch(`${WEBHOOKS}/${hook.id}`).set(w.user.auth).send({ is_active: true }).expect(200);
    const rows = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (list) => list.find((row) => row.id === young.id)?.status === 'succeeded',
    );
    expect(rows.find((row) => row.id === old.id)).toMatchObject({
      status: 'failed',
      error: 'HTTP 500: ok / retry period ended while the webhook was disabled',
    });
    await sleep(500);
    expect(r.requests.slice(seen).map((q) => q.id)).toEqual([String(young.id)]);
  });

  it('a redirect is not followed: the attempt failed with the redirect in its error, the target never hit', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    const hook = await createWebhook(t, w.user, { url: r.url });
    await changeStatus();
    await r.waitFor(2); // retried like any failure
    const [delivery] = await eventually(
      () => deliveriesOf(t, w.user, hook.id),
      (rows) => (rows[0]?.attempts as number) >= 2,
    );
    expect(delivery).toMatchObject({
      status: 'pending',
      response_status: 302,
      error: `HTTP 302: redirect to ${target.url} not followed`,
    });
    await sleep(300);
    expect(target.requests).toHaveLength(0);
  });
});
