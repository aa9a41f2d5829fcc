import { createTestApp, type TestApp } from '../support/app.js';
import { digestsOf, eventually, mailEnv, mailWorld, newTracker, setStatus, sleep } from '../support/mail.js';
import { TestSmtpServer } from '../support/smtp.js';

/**
 * Sending e-mail against a real SMTP server in the test process: acceptance, temporary refusals,
 * dropped connections, permanent refusals, a hanging server. One e-mail per event here (window 0).
 */
describe('notifications: e-mail delivery', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    t = await createTestApp({ env: mailEnv(smtp.url) });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('a DELIVERED change sends one e-mail with a text and an HTML part listing the change', async () => {
    const w = await mailWorld(t);
    const trk = await newTracker(t, w, 'TRK-<b>&amp;');
    const before = Date.now();
    await setStatus(t, w, trk.id);
    const [mail] = await smtp.waitFor(w.user.email, 1);
    expect(mail.subject).toBe('Tracker updates: 1 status changes');
    expect(mail.text).toContain('TRK-<b>&amp;');
    expect(mail.text).toContain(w.run.description);
    expect(mail.text).toContain('CREATED → DELIVERED');
    expect(mail.text).toContain(w.delivery.name);
    expect(mail.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(mail.html).toContain('TRK-&lt;b&gt;&amp;amp;');
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).toContain('CREATED → DELIVERED');
    expect(mail.html).toContain(w.delivery.name);
    expect(mail.raw).toMatch(/^From: Tracker Pipeline <no-reply@localhost>/m);
    const [row] = await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.state === 'sent',
    );
    expect(row).toMatchObject({ state: 'sent', attempts: 1, events: 1 });
    expect(Date.now() - before).toBeLessThan(5000);
    await sleep(300);
    expect(smtp.to(w.user.email)).toHaveLength(1);
  });

  it('a temporary refusal (4xx) is retried, and the e-mail arrives once', async () => {
    const w = await mailWorld(t);
    smtp.script(w.user.email, ['tempfail', 'tempfail', 'accept']);
    await setStatus(t, w, (await newTracker(t, w)).id);
    await smtp.waitFor(w.user.email, 1);
    const [row] = await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.state === 'sent',
    );
    expect(row.attempts).toBe(3);
    expect(smtp.attempts.filter((a) => a.to === w.user.email.toLowerCase()).map((a) => a.behaviour)).toEqual([
      'tempfail',
      'tempfail',
      'accept',
    ]);
    await sleep(300);
    expect(smtp.to(w.user.email)).toHaveLength(1);
  });

  it('a connection dropped in the middle of the message is retried, and the e-mail arrives once', async () => {
    const w = await mailWorld(t);
    smtp.script(w.user.email, ['drop', 'accept']);
    await setStatus(t, w, (await newTracker(t, w)).id);
    await smtp.waitFor(w.user.email, 1);
    const [row] = await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.state === 'sent',
    );
    expect(row.attempts).toBe(2);
    await sleep(300);
    expect(smtp.to(w.user.email)).toHaveLength(1);
  });

  it('a permanent refusal (5xx) is recorded as failed and not retried', async () => {
    const w = await mailWorld(t);
    smtp.script(w.user.email, ['permanent', 'accept', 'accept']);
    await setStatus(t, w, (await newTracker(t, w)).id);
    const [row] = await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.state === 'failed',
    );
    expect(row.attempts).toBe(1);
    expect(row.last_error).toMatch(/550/);
    await sleep(500);
    expect(smtp.attempts.filter((a) => a.to === w.user.email.toLowerCase())).toHaveLength(1);
    expect(smtp.to(w.user.email)).toHaveLength(0);
    const metrics = await t.http().get('/metrics').expect(200);
    expect(metrics.text).toMatch(/^mail_emails_failed_total\{reason="refused"\} [1-9]/m);
    expect(metrics.text).toMatch(/^mail_emails_sent_total [1-9]/m);
  });

  it('temporary failures past the retry period end as failed', async () => {
    const w = await mailWorld(t);
    smtp.script(w.user.email, [
      'tempfail',
      'tempfail',
      'tempfail',
      'tempfail',
      'tempfail',
      'tempfail',
      'tempfail',
      'tempfail',
    ]);
    await setStatus(t, w, (await newTracker(t, w)).id);
    await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.attempts >= 1,
    );
    await t.db.query(`UPDATE mail_digests SET first_attempt_at = now() - interval '25 hours' WHERE user_id = $1`, [
      w.user.id,
    ]);
    const [row] = await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.state === 'failed',
    );
    expect(row.last_error).toMatch(/451/);
    smtp.script(w.user.email, []);
  });

  it('a mail to a user deactivated before the send is dropped as failed', async () => {
    const w = await mailWorld(t);
    smtp.script(w.user.email, ['tempfail', 'tempfail', 'tempfail', 'tempfail', 'tempfail', 'tempfail']);
    await setStatus(t, w, (await newTracker(t, w)).id);
    await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.attempts >= 1,
    );
    await t.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [w.user.id]);
    const [row] = await eventually(
      () => digestsOf(t, w.user.id),
      (rows) => rows[0]?.state === 'failed',
    );
    expect(row.last_error).toMatch(/deactivated/);
    smtp.script(w.user.email, []);
  });
});

describe('notifications: a hanging SMTP server', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    smtp.hang = true;
    t = await createTestApp({ env: mailEnv(smtp.url, { SMTP_TIMEOUT_MS: '300' }) });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('never blocks requests: status changes answer at once while the sends time out and are retried', async () => {
    const w = await mailWorld(t);
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      await setStatus(t, w, (await newTracker(t, w)).id);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    const rows = await eventually(
      () => digestsOf(t, w.user.id),
      (r) => r.length === 5 && r.some((d) => d.attempts >= 1),
    );
    expect(rows.every((d) => d.state === 'queued')).toBe(true);
    expect(rows.find((d) => d.attempts >= 1)?.last_error).toMatch(/greeting never received|timeout|timed out/i);
    const started = Date.now();
    await t
      .http()
      .get('/api/v1/health/basic')
      .set({ Authorization: `Bearer ${t.tokenFor((await t.factories.admin()).id)}` })
      .expect(200);
    expect(Date.now() - started).toBeLessThan(1000);
    smtp.hang = false;
    await smtp.waitFor(w.user.email, 5, 15_000);
    await eventually(
      () => digestsOf(t, w.user.id),
      (r) => r.every((d) => d.state === 'sent'),
    );
  });
});
