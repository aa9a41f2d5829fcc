import { API_KEYS, createKey, NOT_ENOUGH_PERMISSIONS, xApiKey } from '../support/api-keys.js';
import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import { postStatus, trackerWorld, type TrackerWorld } from '../support/trackers.js';
import { TestReceiver, verify, WEBHOOKS, webhookEnv } from '../support/webhooks.js';

/** Webhooks managed with API keys: the `webhooks` scope, and a key's client narrowing carried into its webhooks. */
describe('Webhooks with API keys', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let receiver: TestReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: webhookEnv() });
    w = await trackerWorld(t);
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await closeApps(t);
  });

  const hook = (clientIds?: number[]) => ({
    url: receiver.url,
    event_types: ['tracker.status_changed'],
    ...(clientIds ? { client_ids: clientIds } : {}),
  });

  it('needs the webhooks scope: a read or write key gets 403 on every webhook route and keeps working', async () => {
    const { key } = await createKey(t, w.admin.auth, { scopes: ['read', 'write', 'ingest'] });
    for (const res of [
      await t.http().get(WEBHOOKS).set(xApiKey(key)),
      await t.http().post(WEBHOOKS).set(xApiKey(key)).send(hook()),
      await t.http().get(`${WEBHOOKS}/1`).set(xApiKey(key)),
    ]) {
      expect([res.status, res.body]).toEqual([403, NOT_ENOUGH_PERMISSIONS]);
    }
    await t.http().get('/api/v1/trackers').set(xApiKey(key)).expect(200);
    const { key: hooksOnly } = await createKey(t, w.admin.auth, { scopes: ['webhooks'] });
    await t.http().get('/api/v1/trackers').set(xApiKey(hooksOnly)).expect(403);
    await t.http().get(API_KEYS).set(xApiKey(hooksOnly)).expect(403);
    const created = await t.http().post(WEBHOOKS).set(xApiKey(hooksOnly)).send(hook()).expect(201);
    expect(created.body).toMatchObject({ user_id: w.admin.id, client_ids: null });
    await t.http().delete(`${WEBHOOKS}/${created.body.id}`).set(xApiKey(hooksOnly)).expect(200); // the next test shares the receiver
  });

  it("a key narrowed to client A creates webhooks only within A's clients, sees only those, and they get A's events only", async () => {
    const { key } = await createKey(t, w.userA.auth, { scopes: ['webhooks'], client_ids: [w.clientA.id] });
    const outside = await t
      .http()
      .post(WEBHOOKS)
      .set(xApiKey(key))
      .send(hook([w.clientA.id, w.clientB.id]));
    expect(outside.status).toBe(422);
    expect(outside.body.errors.map((e: { field: string }) => e.field)).toEqual(['client_ids']);
    const unnarrowed = await t.http().post(WEBHOOKS).set(xApiKey(key)).send(hook());
    expect([unnarrowed.status, unnarrowed.body.errors?.[0]?.field]).toEqual([422, 'client_ids']);

    const own = await t.http().post(WEBHOOKS).set(w.userA.auth).send(hook()).expect(201); // every client of A's user
    const narrowed = await t
      .http()
      .post(WEBHOOKS)
      .set(xApiKey(key))
      .send(hook([w.clientA.id]))
      .expect(201);
    const listed = await t.http().get(WEBHOOKS).set(xApiKey(key)).expect(200);
    expect(listed.body.items.map((h: { id: number }) => h.id)).toEqual([narrowed.body.id]);
    await t.http().get(`${WEBHOOKS}/${own.body.id}`).set(xApiKey(key)).expect(404);

    const trackerB = await t.factories.tracker({ runId: w.runB.id });
    const trackerA = await t.factories.tracker({ runId: w.runA.id });
    await postStatus(t, w, trackerB.id, 'IN_TRANSIT');
    await postStatus(t, w, trackerA.id, 'IN_TRANSIT');
    // The JWT-made webhook (all of the user's clients: A) and the key's (A) each get A's change once.
    const requests = await receiver.waitFor(2);
    const bodies = requests.map((r) => JSON.parse(r.body) as { data: { tracker_id: number } });
    expect(bodies.map((b) => b.data.tracker_id)).toEqual([trackerA.id, trackerA.id]);
    const secrets = new Map([
      [String(own.body.id), own.body.secret as string],
      [String(narrowed.body.id), narrowed.body.secret as string],
    ]);
    const [rows] = [
      (await t.db.query(
        'SELECT id::text, webhook_id::text FROM webhook_deliveries WHERE webhook_id = ANY($1::bigint[])',
        [[own.body.id, narrowed.body.id]],
      )) as { id: string; webhook_id: string }[],
    ];
    expect(rows).toHaveLength(2); // B's change made no delivery for either webhook
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.requests).toHaveLength(2);
    for (const request of requests) {
      const row = rows.find((r) => r.id === request.id)!;
      expect(verify(secrets.get(row.webhook_id)!, request)).toMatchObject({ type: 'tracker.status_changed' });
    }
  });
});
