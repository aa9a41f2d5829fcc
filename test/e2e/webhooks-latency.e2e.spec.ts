import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import { mailWorld, newTracker, setStatus, sleep, type MailWorld } from '../support/mail.js';
import { createWebhook, TestReceiver } from '../support/webhooks.js';

/** The promise of a first attempt within 5 s of the event's commit. */
const FIRST_ATTEMPT_MS = 5000;

/**
 * How soon a delivery is first attempted, with the service's default worker settings (no test
 * shortcuts): each event's delivery reaches a real receiver within 5 s of the commit of the change
 * that made it, measured from the moment the API answered (after the commit) and from the
 * delivery's own created_at and the event's occurred_at (same host, same clock).
 */
describe('webhooks: first attempt latency', () => {
  let t: TestApp;
  let w: MailWorld;
  let r: TestReceiver;

  beforeAll(async () => {
    t = await createTestApp();
    w = await mailWorld(t);
    r = await TestReceiver.start();
  });
  afterAll(async () => {
    await r.close();
    await closeApps(t);
  });

  it('attempts each delivery within 5 s of its event’s commit', async () => {
    const hook = await createWebhook(t, w.user, { url: r.url });
    for (let i = 0; i < 4; i++) {
      const tracker = await newTracker(t, w);
      await setStatus(t, w, tracker.id);
      const committedAt = Date.now();
      const request = (await r.waitFor(i + 1, FIRST_ATTEMPT_MS + 2000))[i];
      const [row] = await t.db.query(
        `SELECT (extract(epoch FROM d.created_at) * 1000)::float8 AS created_ms,
                (extract(epoch FROM e.occurred_at) * 1000)::float8 AS occurred_ms
           FROM webhook_deliveries d JOIN notification_events e ON e.id = d.event_id WHERE d.id = $1`,
        [request.id],
      );
      expect(JSON.parse(request.body).data.tracker_id).toBe(tracker.id);
      expect(request.receivedAt - committedAt).toBeLessThan(FIRST_ATTEMPT_MS);
      expect(request.receivedAt - row.created_ms).toBeLessThan(FIRST_ATTEMPT_MS);
      expect(request.receivedAt - row.occurred_ms).toBeLessThan(FIRST_ATTEMPT_MS);
      expect(request.receivedAt).toBeGreaterThanOrEqual(row.created_ms);
      // Events at different points of the worker's poll interval.
      await sleep(500 + i * 300);
    }
    const [{ attempts }] = await t.db.query(
      `SELECT max(attempts)::int AS attempts FROM webhook_deliveries WHERE webhook_id = $1`,
      [hook.id],
    );
    expect(attempts).toBe(1);
  });
});
