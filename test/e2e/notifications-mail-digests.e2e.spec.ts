import { MaintenanceService } from '../../src/maintenance/maintenance.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { digestsOf, eventually, mailEnv, mailWorld, newTracker, setStatus, sleep } from '../support/mail.js';
import { TestSmtpServer } from '../support/smtp.js';

const PIPELINE = '/api/v1/health/pipeline';

/** Who gets an e-mail for which change, and how changes are gathered into one e-mail per window. */
describe('notifications: e-mail digests', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    // A 2.4 s window: the changes of one test fall into one window.
    t = await createTestApp({ env: mailEnv(smtp.url, { EMAIL_DIGEST_MINUTES: '0.04' }) });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('several changes in a window make one e-mail listing them all; each user gets their own', async () => {
    const w = await mailWorld(t);
    const colleague = await t.factories.user({ clients: [w.clientId] });
    const trackers = [await newTracker(t, w), await newTracker(t, w), await newTracker(t, w)];
    for (const trk of trackers) await setStatus(t, w, trk.id);
    const [mail] = await smtp.waitFor(w.user.email, 1);
    expect(mail.subject).toBe('Tracker updates: 3 status changes');
    for (const trk of trackers) {
      expect(mail.text).toContain(trk.name);
      expect(mail.html).toContain(trk.name);
    }
    const [other] = await smtp.waitFor(colleague.email, 1);
    expect(other.subject).toBe('Tracker updates: 3 status changes');
    await sleep(500);
    expect(smtp.to(w.user.email)).toHaveLength(1);
    expect(await digestsOf(t, w.user.id)).toEqual([expect.objectContaining({ state: 'sent', events: 3 })]);

    // A change after the window has ended opens a new window: a second e-mail.
    await setStatus(t, w, (await newTracker(t, w)).id);
    const mails = await smtp.waitFor(w.user.email, 2);
    expect(mails[1].subject).toBe('Tracker updates: 1 status changes');
  });

  it('changes to a status not listed in EMAIL_NOTIFY_STATUSES send nothing', async () => {
    const w = await mailWorld(t);
    await setStatus(t, w, (await newTracker(t, w)).id, 'IN_TRANSIT');
    expect(await digestsOf(t, w.user.id)).toEqual([]);
  });

  it('a user with the e-mail preference off, and a user who cannot see the tracker, get nothing', async () => {
    const w = await mailWorld(t);
    const optedOut = await t.factories.user({ clients: [w.clientId] });
    await t.db.query(`UPDATE users SET notify_email = false WHERE id = $1`, [optedOut.id]);
    const elsewhere = await mailWorld(t);
    await setStatus(t, w, (await newTracker(t, w)).id);
    await smtp.waitFor(w.user.email, 1);
    expect(await digestsOf(t, optedOut.id)).toEqual([]);
    expect(await digestsOf(t, elsewhere.user.id)).toEqual([]);
    // Turning the preference on later does not deliver the earlier change.
    await t.db.query(`UPDATE users SET notify_email = true WHERE id = $1`, [optedOut.id]);
    await sleep(300);
    expect(smtp.to(optedOut.email)).toEqual([]);
  });

  it('check_notification_delivery passes, and fails while an e-mail is unsent 15 minutes past its window', async () => {
    const admin = await t.factories.admin();
    const step = async () =>
      (await t.http().get(PIPELINE).set(admin.auth).expect(200)).body.test_steps.check_notification_delivery;
    expect(await step()).toMatchObject({ success: true, details: { skipped: false, overdue: 0 } });
    const w = await mailWorld(t);
    smtp.script(w.user.email, ['tempfail']);
    await setStatus(t, w, (await newTracker(t, w)).id);
    await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.attempts === 1,
    );
    // Its window ended 16 minutes ago and the next retry is later.
    await t.db.query(
      `UPDATE mail_digests SET window_end = now() - interval '16 minutes', next_attempt_at = now() + interval '1 hour' WHERE user_id = $1`,
      [w.user.id],
    );
    const failing = await step();
    expect(failing).toMatchObject({ success: false, details: { overdue: 1 } });
    expect(failing.issues[0]).toMatch(/15 minutes/);
    const body = (await t.http().get(PIPELINE).set(admin.auth).expect(200)).body;
    expect(body.recommendations).toEqual([
      expect.objectContaining({ severity: 'warning', documentation: 'docs/operations.md#check_notification_delivery' }),
    ]);
    // A scrape answers with the previous reading when the database is slower than its short wait:
    // scrape until the reading of the overdue e-mail arrives.
    const oldestAge = async () =>
      Number(/^mail_queue_oldest_age_seconds (\S+)$/m.exec((await t.http().get('/metrics').expect(200)).text)?.[1]);
    expect(await eventually(oldestAge, (age) => age > 900)).toBeGreaterThan(900);
    await t.db.query(`UPDATE mail_digests SET next_attempt_at = now() WHERE user_id = $1`, [w.user.id]);
    await smtp.waitFor(w.user.email, 1);
    await eventually(step, (s) => s.success === true);
  });
});

describe('notifications: retention of finished e-mails', () => {
  it('the periodic job deletes sent and failed e-mails finished more than 30 days ago, never queued ones', async () => {
    const t = await createTestApp({ env: mailEnv(undefined) });
    try {
      const w = await mailWorld(t);
      await t.db.query(
        `INSERT INTO mail_digests (user_id, state, window_end, next_attempt_at, finished_at)
         VALUES ($1, 'sent', now() - interval '31 days', now(), now() - interval '31 days'),
                ($1, 'failed', now() - interval '31 days', now(), now() - interval '31 days'),
                ($1, 'sent', now() - interval '29 days', now(), now() - interval '29 days'),
                ($1, 'queued', now() - interval '40 days', now() + interval '1 day', NULL)`,
        [w.user.id],
      );
      expect(await t.app.get(MaintenanceService).runOnce()).toMatchObject({ ran: true, mailPurged: 2 });
      expect((await digestsOf(t, w.user.id)).map((d) => d.state)).toEqual(['sent', 'queued']);
    } finally {
      await t.close();
    }
  });
});

describe('notifications: e-mail off without SMTP_URL', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: mailEnv(undefined) });
  });
  afterAll(() => t.close());

  it('queues nothing, and check_notification_delivery is skipped', async () => {
    const w = await mailWorld(t);
    await setStatus(t, w, (await newTracker(t, w)).id);
    expect(await t.db.query(`SELECT count(*)::int AS n FROM notification_events`)).toEqual([{ n: 1 }]);
    expect(await t.db.query(`SELECT count(*)::int AS n FROM mail_digests`)).toEqual([{ n: 0 }]);
    const admin = await t.factories.admin();
    const step = (await t.http().get(PIPELINE).set(admin.auth).expect(200)).body.test_steps.check_notification_delivery;
    expect(step).toMatchObject({ success: true, details: { skipped: true } });
  });
});
