import { escapeHtml, renderDigest, utcTime } from '../../src/mail/mail-digest.renderer.js';
import { backoffDelayMs } from '../../src/infrastructure/outbox/outbox-consumer.js';
import { classifySmtpError } from '../../src/mail/smtp-outcome.js';

describe('mail digest rendering', () => {
  const line = {
    tracker_name: 'TRK-<1>',
    run_description: 'Run "A" & B',
    from_status: 'IN_TRANSIT',
    to_status: 'DELIVERED',
    occurred_at: new Date('2026-03-02T08:05:09.123Z'),
    location_name: null,
  };

  it('lists every change in the text and the HTML part, HTML-escaped', () => {
    const digest = renderDigest([line, { ...line, tracker_name: 'TRK-2', location_name: "O'Hare" }]);
    expect(digest.subject).toBe('Tracker updates: 2 status changes');
    expect(digest.text).toContain(
      'TRK-<1> (run: Run "A" & B): IN_TRANSIT → DELIVERED at 2026-03-02 08:05:09 UTC, location: —',
    );
    expect(digest.text).toContain("location: O'Hare");
    expect(digest.html).toContain(
      '<td>TRK-&lt;1&gt;</td><td>Run &quot;A&quot; &amp; B</td><td>IN_TRANSIT → DELIVERED</td><td>2026-03-02 08:05:09 UTC</td>',
    );
    expect(digest.html).toContain('O&#39;Hare');
    expect(escapeHtml('<script>')).toBe('&lt;script&gt;');
    expect(utcTime(new Date('2026-12-31T23:59:59Z'))).toBe('2026-12-31 23:59:59 UTC');
  });
});

describe('mail digest rendering with alerts', () => {
  const change = {
    tracker_name: 'TRK-1',
    run_description: 'Run A',
    from_status: 'IN_TRANSIT',
    to_status: 'DELIVERED',
    occurred_at: new Date('2026-03-02T08:05:09.123Z'),
    location_name: 'Dock',
    alert_kind: null,
  };
  const alert = {
    ...change,
    tracker_name: 'TRK-<2>',
    alert_kind: 'silent',
    occurred_at: new Date('2026-03-02T09:00:00Z'),
  };

  it('lists opened alerts in their own section and counts them in the subject', () => {
    const digest = renderDigest([change, alert]);
    expect(digest.subject).toBe('Tracker updates: 1 status changes, 1 alerts');
    expect(digest.text).toContain('\nAlerts:\n- TRK-<2> (run: Run A): silent opened at 2026-03-02 09:00:00 UTC\n');
    expect(digest.text).not.toContain('TRK-<2> (run: Run A): IN_TRANSIT');
    expect(digest.html).toContain('<h2>Alerts</h2>');
    expect(digest.html).toContain(
      '<td>TRK-&lt;2&gt;</td><td>Run A</td><td>silent</td><td>2026-03-02 09:00:00 UTC</td>',
    );
    expect(renderDigest([change]).html).not.toContain('Alerts');
  });
});

describe('SMTP outcomes', () => {
  it('treats 5xx replies as permanent, and 4xx, network errors and auth refusals as temporary', () => {
    expect(classifySmtpError({ responseCode: 550, response: '550 No such mailbox' })).toEqual({
      kind: 'permanent',
      reason: '550 No such mailbox',
    });
    expect(classifySmtpError({ responseCode: 451, response: '451 Try later' }).kind).toBe('temporary');
    expect(classifySmtpError({ code: 'ECONNECTION', message: 'connect ECONNREFUSED' }).kind).toBe('temporary');
    expect(classifySmtpError({ code: 'ETIMEDOUT', message: 'Greeting never received' }).kind).toBe('temporary');
    expect(classifySmtpError({ code: 'EAUTH', responseCode: 535, response: '535 Bad credentials' }).kind).toBe(
      'temporary',
    );
  });

  it('backs off from the first delay, doubling, up to the maximum', () => {
    const none = () => 0;
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelayMs(n, 20_000, 900_000, none))).toEqual([
      20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 900_000, 900_000,
    ]);
    expect(backoffDelayMs(1, 20_000, 900_000, () => 1)).toBe(18_000);
  });
});
