import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import { eventually, mailWorld, newTracker, setStatus, sleep, type MailWorld } from '../support/mail.js';
import { createWebhook, deliveriesOf, TestReceiver, webhookEnv, WEBHOOKS } from '../support/webhooks.js';

/**
 * Webhook retries against real receivers: a manual retry on a disabled webhook, the end of the 24-hour
 * retry period, enabling a webhook again after some of its deliveries outlived it, and redirects.
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
});
