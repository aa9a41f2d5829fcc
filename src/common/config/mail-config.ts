/** The part of the configuration reader mailConfig uses (app-config.ts's Reader). */
interface ConfigReader {
  readonly problems: string[];
  string(name: string, fallback: string): string;
  int(name: string, fallback: number, min: number, max: number): number;
  number(name: string, fallback: number, min: number, max: number): number;
  url(name: string, protocols: string[]): string | undefined;
}

export interface MailConfig {
  /** smtp:// or smtps://, optional user:pass@; unset: no e-mail is queued or sent. */
  smtpUrl: string | undefined;
  from: string;
  /** to_status values that queue an e-mail. */
  statuses: string[];
  /** Digest window in minutes (decimals allowed); 0: one e-mail per event. */
  digestMinutes: number;
  /** Idle poll period of the sending worker. */
  pollMs: number;
  /** First retry delay after a temporary failure; doubles per attempt up to retryMaxMs. */
  retryMinMs: number;
  retryMaxMs: number;
  /** Connection, greeting and socket-inactivity timeout of each SMTP conversation. */
  smtpTimeoutMs: number;
}

/** The tracker statuses as the API names them (the trackers module owns them; config must not import it). */
const STATUS_NAMES = ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'];

export function mailConfig(r: ConfigReader): MailConfig {
  const statuses = r
    .string('EMAIL_NOTIFY_STATUSES', 'DELIVERED')
    .split(',')
    .map((status) => status.trim())
    .filter(Boolean);
  for (const status of statuses) {
    if (!STATUS_NAMES.includes(status))
      r.problems.push(`EMAIL_NOTIFY_STATUSES entry "${status}" must be one of ${STATUS_NAMES.join(', ')}`);
  }
  const mail: MailConfig = {
    smtpUrl: r.url('SMTP_URL', ['smtp:', 'smtps:']),
    from: r.string('MAIL_FROM', 'Tracker Pipeline <no-reply@localhost>'),
    statuses,
    digestMinutes: r.number('EMAIL_DIGEST_MINUTES', 15, 0, 1440),
    pollMs: r.int('MAIL_POLL_MS', 5000, 10, 600_000),
    retryMinMs: r.int('MAIL_RETRY_MIN_MS', 20_000, 10, 30_000),
    retryMaxMs: r.int('MAIL_RETRY_MAX_MS', 15 * 60_000, 10, 15 * 60_000),
    smtpTimeoutMs: r.int('SMTP_TIMEOUT_MS', 15_000, 100, 120_000),
  };
  if (mail.retryMaxMs < mail.retryMinMs) r.problems.push('MAIL_RETRY_MAX_MS must not be below MAIL_RETRY_MIN_MS');
  return mail;
}
