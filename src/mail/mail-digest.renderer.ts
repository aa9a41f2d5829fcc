/** One status change, or one opened alert (`alert_kind` set; `occurred_at` is when it opened), as an e-mail lists it. */
export interface DigestLine {
  tracker_name: string;
  run_description: string;
  from_status: string;
  to_status: string;
  occurred_at: Date;
  location_name: string | null;
  alert_kind?: string | null;
}

export interface RenderedDigest {
  subject: string;
  text: string;
  html: string;
}

/** `2026-11-24 06:09:24 UTC` */
export function utcTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * The digest e-mail of a user: one line (text) or table row (HTML) per status change, in event
 * order, then the opened alerts in a section of their own. Every value from the database is escaped
 * in the HTML part; names may hold any text.
 */
export function renderDigest(lines: readonly DigestLine[]): RenderedDigest {
  const changes = lines.filter((line) => !line.alert_kind);
  const alerts = lines.filter((line) => line.alert_kind);
  // The subject's form is fixed (mail filters match it), one change included.
  const subject =
    `Tracker updates: ${changes.length} status changes` + (alerts.length > 0 ? `, ${alerts.length} alerts` : '');
  const fields = changes.map((line) => ({
    tracker: line.tracker_name,
    run: line.run_description || '—',
    change: `${line.from_status} → ${line.to_status}`,
    time: utcTime(line.occurred_at),
    location: line.location_name ?? '—',
  }));
  const alertFields = alerts.map((line) => ({
    tracker: line.tracker_name,
    run: line.run_description || '—',
    kind: line.alert_kind as string,
    time: utcTime(line.occurred_at),
  }));
  const text = [
    `${subject}`,
    '',
    ...fields.map((f) => `- ${f.tracker} (run: ${f.run}): ${f.change} at ${f.time}, location: ${f.location}`),
    ...(alertFields.length > 0
      ? ['', 'Alerts:', ...alertFields.map((f) => `- ${f.tracker} (run: ${f.run}): ${f.kind} opened at ${f.time}`)]
      : []),
    '',
  ].join('\n');
  const rows = fields
    .map(
      (f) =>
        `<tr><td>${escapeHtml(f.tracker)}</td><td>${escapeHtml(f.run)}</td><td>${escapeHtml(f.change)}</td><td>${escapeHtml(f.time)}</td><td>${escapeHtml(f.location)}</td></tr>`,
    )
    .join('\n');
  const alertSection =
    alertFields.length === 0
      ? ''
      : `<h2>Alerts</h2>
<table>
<thead><tr><th>Tracker</th><th>Production run</th><th>Alert</th><th>Opened at (UTC)</th></tr></thead>
<tbody>
${alertFields
  .map(
    (f) =>
      `<tr><td>${escapeHtml(f.tracker)}</td><td>${escapeHtml(f.run)}</td><td>${escapeHtml(f.kind)}</td><td>${escapeHtml(f.time)}</td></tr>`,
  )
  .join('\n')}
</tbody>
</table>
`;
  const html = `<!doctype html>
<html><body>
<h1>${escapeHtml(subject)}</h1>
<table>
<thead><tr><th>Tracker</th><th>Production run</th><th>Status change</th><th>Time (UTC)</th><th>Location</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${alertSection}</body></html>
`;
  return { subject, text, html };
}
