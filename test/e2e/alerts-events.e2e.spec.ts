import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AlertCheckService } from '../../src/alerts/alert-check.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postReports, report } from '../support/locations.js';
import { digestsOf, mailEnv, mailWorld, setStatus, type MailWorld } from '../support/mail.js';
import { TestSmtpServer } from '../support/smtp.js';
import { createWebhook, TestReceiver, verify, webhookEnv } from '../support/webhooks.js';

const HOUR = 3_600_000;

/**
 * Alert events take the status changes' path: the inbox (and so the live stream), webhooks
 * subscribed to the alert types, and e-mail digests for the kinds in EMAIL_NOTIFY_ALERTS.
 */
describe('Alert events', () => {
  let smtp: TestSmtpServer;
  let receiver: TestReceiver;
  let t: TestApp;
  let seq = 0;

  /** A tracker of the world's run, created 31 hours ago and in transit since 30 hours ago. */
  async function silentTracker(w: MailWorld): Promise<{ id: number; name: string }> {
    const name = `alert-event-${++seq}`;
    const [{ id }] = (await t.db.query(`INSERT INTO trackers (name, production_run_id) VALUES ($1, $2) RETURNING id`, [
      name,
      w.run.id,
    ])) as { id: number }[];
    for (const [status, hours] of [
      ['CREATED', 31],
      ['IN_TRANSIT', 30],
    ] as const)
      await t.db.query(`INSERT INTO tracker_status_history (tracker_id, status, timestamp) VALUES ($1, $2, $3)`, [
        id,
        status,
        new Date(Date.now() - hours * HOUR),
      ]);
    await t.db.query('SELECT trackers_follow_latest_entry(ARRAY[$1]::int[])', [id]);
    return { id, name };
  }

  const inbox = async (w: MailWorld) =>
    (await t.http().get('/api/v1/notifications').set(w.user.auth).expect(200)).body.items as {
      event: Record<string, unknown> & { alert?: Record<string, unknown> };
    }[];

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    receiver = await TestReceiver.start();
    t = await createTestApp({
      env: { ...mailEnv(smtp.url, { EMAIL_DIGEST_MINUTES: '0.02' }), ...webhookEnv(), ALERT_CHECK_SECONDS: '86400' },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await smtp?.close();
  });

  it('an opened and a resolved alert reach the inbox, the webhook and (opened) the digest', async () => {
    const w = await mailWorld(t);
    const hook = await createWebhook(t, w.user, {
      url: receiver.url,
      event_types: ['tracker.alert_opened', 'tracker.alert_resolved'],
    });
    const trk = await silentTracker(w);
    await t.app.get(AlertCheckService).runOnce();

    const [opened] = await inbox(w);
    expect(opened.event).toMatchObject({
      type: 'tracker.alert_opened',
      tracker_id: trk.id,
      tracker_name: trk.name,
      production_run_id: w.run.id,
      client_id: w.clientId,
      alert: { kind: 'silent', tracker_id: trk.id, resolved_at: null, details: { last_report_at: null } },
    });
    expect(opened.event).not.toHaveProperty('from_status');
    expect(opened.event.occurred_at).toBe(opened.event.alert?.opened_at);

    const [mail] = await smtp.waitFor(w.user.email, 1);
    expect(mail.subject).toBe('Tracker updates: 0 status changes, 1 alerts');
    expect(mail.text).toContain(`Alerts:\n- ${trk.name} (run: ${w.run.description}): silent opened at`);
    expect(mail.html).toContain('<h2>Alerts</h2>');

    const [delivery] = await receiver.waitFor(1);
    const body = verify(hook.secret, delivery) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(body).toEqual({ type: 'tracker.alert_opened', timestamp: opened.event.occurred_at, data: opened.event });

    // Delivered: the tracker left transit, its alert resolves in the same write.
    await setStatus(t, w, trk.id);
    const events = (await inbox(w)).map((n) => n.event);
    // Newest first; the oldest is the tracker's own move into transit.
    expect(events.map((e) => e.type)).toEqual([
      'tracker.alert_resolved',
      'tracker.status_changed',
      'tracker.alert_opened',
      'tracker.status_changed',
    ]);
    expect(events[0].alert).toMatchObject({ id: opened.event.alert?.id, resolved_at: events[0].occurred_at });
    const resolvedDelivery = (await receiver.waitFor(2))[1];
    expect((verify(hook.secret, resolvedDelivery) as { type: string }).type).toBe('tracker.alert_resolved');
    // A resolution is no e-mail: the next digest lists the status change alone.
    const mails = await smtp.waitFor(w.user.email, 2);
    expect(mails[1].subject).toBe('Tracker updates: 1 status changes');
  });

  it('kinds outside EMAIL_NOTIFY_ALERTS reach the inbox but send no e-mail', async () => {
    const w = await mailWorld(t);
    const [{ id }] = (await t.db.query(
      `INSERT INTO trackers (name, production_run_id, status) VALUES ($1, $2, 'IN_TRANSIT') RETURNING id`,
      [`alert-battery-${++seq}`, w.run.id],
    )) as { id: number }[];
    await t.db.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp) VALUES ($1, 'IN_TRANSIT', now())`,
      [id],
    );
    const ingest = await t.factories.ingest();
    await postReports(t, ingest, [report(id, new Date().toISOString(), { battery: 3 } as object)]).expect(200);
    await t.app.get(AlertCheckService).runOnce();
    const [n] = await inbox(w);
    expect(n.event).toMatchObject({ type: 'tracker.alert_opened', alert: { kind: 'battery_low' } });
    expect(await digestsOf(t, w.user.id)).toEqual([]);
  });
});
