import pg from 'pg';
import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { eventually, mailWorld, newTracker, setStatus, type MailWorld } from '../support/mail.js';
import { createWebhook, deliveriesOf, TestReceiver, webhookEnv, WEBHOOKS } from '../support/webhooks.js';

/**
 * Receivers that misbehave: one that never answers is given up on after 10 s and holds at most
 * its per-webhook share of the delivery slots, so other webhooks' deliveries and API requests go on
 * meanwhile; one that streams 100 MB is cut off after a small read.
 */
describe('webhooks: slow and endless receivers', () => {
  let t: TestApp;
  let w: MailWorld;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: webhookEnv({ WEBHOOK_CONCURRENCY: '4', WEBHOOK_PER_WEBHOOK_CONCURRENCY: '2' }) });
    w = await mailWorld(t);
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await closeApps(t);
  });

  it('a receiver that never answers times out at 10 s, without delaying another webhook or an API request', async () => {
    const hang = await TestReceiver.start(() => 'hang');
    receivers.push(hang);
    const hangHook = await createWebhook(t, w.user, { url: hang.url });
    // Four events: two attempts hang (the webhook's share of the slots), two wait for them.
    for (let i = 0; i < 4; i++) await setStatus(t, w, (await newTracker(t, w)).id);
    await hang.waitFor(2);
    expect(hang.open).toBe(2);

    const fast = await TestReceiver.start();
    receivers.push(fast);
    const other = await mailWorld(t);
    await createWebhook(t, other.user, { url: fast.url });
    await setStatus(t, other, (await newTracker(t, other)).id);
    await fast.waitFor(1);
    const list = await t.http().get(WEBHOOKS).set(other.user.auth).expect(200);
    expect(list.body.total).toBe(1);
    // Both answered while the hanging attempts were still open.
    expect(hang.open).toBe(2);
    expect(hang.requests).toHaveLength(2);

    const timedOut = await eventually(
      () => deliveriesOf(t, w.user, hangHook.id, '&status=pending'),
      (rows) => rows.filter((row) => row.attempts === 1).length >= 2,
      30_000,
    );
    for (const row of timedOut.filter((r) => r.attempts === 1)) {
      expect(row).toMatchObject({ response_status: null, error: 'no answer within 10 s' });
      expect(row.response_time_ms).toBeGreaterThanOrEqual(9_900);
    }
  }, 60_000);

  it('a receiver that streams 100 MB is cut off after a small read; its 200 counts', async () => {
    const endless = await TestReceiver.start(() => ({ streamBytes: 100 * 1024 * 1024 }));
    receivers.push(endless);
    const world = await mailWorld(t);
    const hook = await createWebhook(t, world.user, { url: endless.url });
    await setStatus(t, world, (await newTracker(t, world)).id);
    await endless.waitFor(1);
    await eventually(
      () => deliveriesOf(t, world.user, hook.id),
      (rows) => rows[0]?.status === 'succeeded',
      20_000,
    );
    await eventually(
      async () => endless.streams[0],
      (stream) => stream !== undefined && endless.open === 0,
    );
    expect(endless.streams[0].cutOff).toBe(true);
    expect(endless.streams[0].written).toBeLessThan(20 * 1024 * 1024);
  });

  it('a shutdown ends the attempts in flight at once: recorded as failed, to be retried with the same webhook-id', async () => {
    const hang = await TestReceiver.start(() => 'hang');
    receivers.push(hang);
    // An app of its own (its own database), so no other instance takes the delivery.
    const database = await createTestDatabase();
    try {
      const own = await createTestApp({ database, env: webhookEnv() });
      const world = await mailWorld(own);
      const hook = await createWebhook(own, world.user, { url: hang.url });
      await setStatus(own, world, (await newTracker(own, world)).id);
      const [request] = await hang.waitFor(1);
      await closeApps(own);
      const client = new pg.Client({ connectionString: databaseUrl(database) });
      await client.connect();
      const { rows } = await client
        .query(`SELECT id::text, status, attempts, error FROM webhook_deliveries WHERE webhook_id = $1`, [hook.id])
        .finally(() => client.end());
      expect(rows).toEqual([
        { id: request.id, status: 'pending', attempts: 1, error: 'the service stopped before the receiver answered' },
      ]);
    } finally {
      await dropTestDatabase(database);
    }
  });
});
