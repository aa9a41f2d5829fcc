import type { TestApp } from './app.js';
import type { CreatedUser } from './factories.js';
import { TRACKERS } from './trackers.js';

/** Env of a test app sending e-mail to `smtpUrl` with short windows and intervals. */
export function mailEnv(
  smtpUrl: string | undefined,
  overrides: Record<string, string> = {},
): Record<string, string | undefined> {
  return {
    SMTP_URL: smtpUrl,
    EMAIL_DIGEST_MINUTES: '0',
    MAIL_POLL_MS: '50',
    MAIL_RETRY_MIN_MS: '100',
    MAIL_RETRY_MAX_MS: '400',
    SMTP_TIMEOUT_MS: '1000',
    ...overrides,
  };
}

export interface MailWorld {
  user: CreatedUser;
  clientId: number;
  run: { id: number; description: string };
  delivery: { id: number; name: string };
}

/** A user who alone (no admin in the world) sees a client of its own with one run. */
export async function mailWorld(t: TestApp, options: { email?: string } = {}): Promise<MailWorld> {
  const f = t.factories;
  const client = await f.client();
  const run = await f.run({ clientId: client.id });
  const user = await f.user({ clients: [client.id], email: options.email });
  return { user, clientId: client.id, run, delivery: await f.deliveryLocation() };
}

/** A new tracker in the world's run (no event: creation is not a change). */
export async function newTracker(t: TestApp, w: MailWorld, name?: string): Promise<{ id: number; name: string }> {
  return t.factories.tracker({ runId: w.run.id, name });
}

/** A manual status entry through the API; DELIVERED goes to the world's delivery location. */
export async function setStatus(
  t: TestApp,
  w: MailWorld,
  trackerId: number,
  status = 'DELIVERED',
  as: CreatedUser = w.user,
): Promise<void> {
  const body = status === 'DELIVERED' ? { status, delivery_location_id: w.delivery.id } : { status };
  await t.http().post(`${TRACKERS}/${trackerId}/status`).set(as.auth).send(body).expect(201);
}

export interface DigestRow {
  id: number;
  user_id: number;
  state: 'queued' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
  events: number;
}

/** The e-mail queue of a user, oldest first. */
export async function digestsOf(t: TestApp, userId: number): Promise<DigestRow[]> {
  return t.db.query(
    `SELECT d.id::int, d.user_id, d.state, d.attempts, d.last_error, (SELECT count(*)::int FROM mail_digest_events e WHERE e.digest_id = d.id) AS events
       FROM mail_digests d WHERE d.user_id = $1 ORDER BY d.id`,
    [userId],
  );
}

/** Polls until `check` holds (fails after timeoutMs). */
export async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
