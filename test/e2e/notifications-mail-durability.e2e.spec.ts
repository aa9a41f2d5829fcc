import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import {
  digestsOf,
  eventually,
  mailEnv,
  mailWorld,
  newTracker,
  setStatus,
  sleep,
  type MailWorld,
} from '../support/mail.js';
import { TestSmtpServer } from '../support/smtp.js';

/** The queue lives in PostgreSQL: restarts lose nothing, and several instances send each e-mail once. */
describe('notifications: e-mail across restarts and instances', () => {
  let smtp: TestSmtpServer;
  let database: string;
  const open: TestApp[] = [];

  const start = async (env: Record<string, string> = {}) => {
    const app = await createTestApp({ database, env: mailEnv(smtp.url, env) });
    open.push(app);
    return app;
  };
  const stop = async (app: TestApp) => {
    open.splice(open.indexOf(app), 1);
    await app.close();
  };

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const app of [...open]) await stop(app);
  });
  afterAll(async () => {
    await smtp.close();
    await dropTestDatabase(database);
  });

  it('mail queued by a service that stops is sent by the next one, once', async () => {
    // A window that is still open when the first service stops.
    const first = await start({ EMAIL_DIGEST_MINUTES: '0.05' });
    const w = await mailWorld(first);
    await setStatus(first, w, (await newTracker(first, w)).id);
    await setStatus(first, w, (await newTracker(first, w)).id);
    await stop(first);
    expect(await digestsOf2(w)).toEqual([expect.objectContaining({ state: 'queued', attempts: 0, events: 2 })]);
    const second = await start({ EMAIL_DIGEST_MINUTES: '0.05' });
    const [mail] = await smtp.waitFor(w.user.email, 1);
    expect(mail.subject).toBe('Tracker updates: 2 status changes');
    await eventually(
      () => digestsOf(second, w.user.id),
      (rows) => rows[0]?.state === 'sent',
    );
    await sleep(300);
    expect(smtp.to(w.user.email)).toHaveLength(1);
  });

  it('mail waiting for a retry when the service stops is retried by the next one, once', async () => {
    const first = await start({ MAIL_RETRY_MIN_MS: '1500', MAIL_RETRY_MAX_MS: '1500' });
    const w = await mailWorld(first);
    smtp.script(w.user.email, ['tempfail']);
    await setStatus(first, w, (await newTracker(first, w)).id);
    await eventually(
      () => digestsOf(first, w.user.id),
      (rows) => rows[0]?.attempts === 1,
    );
    await stop(first);
    const second = await start();
    await smtp.waitFor(w.user.email, 1);
    expect(
      await eventually(
        () => digestsOf(second, w.user.id),
        (rows) => rows[0]?.state === 'sent',
      ),
    ).toEqual([expect.objectContaining({ attempts: 2 })]);
    await sleep(300);
    expect(smtp.to(w.user.email)).toHaveLength(1);
  });

  it('a message claimed by an instance that crashed is sent after its lease lapses', async () => {
    const first = await start({ EMAIL_DIGEST_MINUTES: '0.03' });
    const w = await mailWorld(first);
    await setStatus(first, w, (await newTracker(first, w)).id);
    await stop(first);
    // As a crashed instance leaves it: claimed, lease running.
    await sharedQuery(
      `UPDATE mail_digests SET claims = claims + 1, claimed_until = now() + interval '3 seconds' WHERE user_id = $1`,
      [w.user.id],
    );
    const second = await start();
    const started = Date.now();
    await sleep(1000);
    expect(smtp.to(w.user.email)).toHaveLength(0);
    await smtp.waitFor(w.user.email, 1);
    expect(Date.now() - started).toBeGreaterThan(800);
    await eventually(
      () => digestsOf(second, w.user.id),
      (rows) => rows[0]?.state === 'sent',
    );
  });

  it('two instances send every e-mail exactly once', async () => {
    const a = await start();
    const b = await start();
    const worlds: MailWorld[] = [];
    for (let i = 0; i < 6; i++) worlds.push(await mailWorld(a));
    // Some refused once, so retries are claimed by either instance too.
    smtp.script(worlds[0].user.email, ['tempfail']);
    smtp.script(worlds[1].user.email, ['drop']);
    await Promise.all(
      worlds.map(async (w, i) => {
        const app = i % 2 === 0 ? a : b;
        for (let k = 0; k < 3; k++) await setStatus(app, w, (await newTracker(app, w)).id);
      }),
    );
    for (const w of worlds) await smtp.waitFor(w.user.email, 3);
    await sleep(500);
    for (const w of worlds) expect(smtp.to(w.user.email)).toHaveLength(3);
    const unsent = await sharedQuery(`SELECT count(*)::int AS n FROM mail_digests WHERE state <> 'sent'`);
    expect(unsent).toEqual([{ n: 0 }]);
  });

  async function digestsOf2(w: MailWorld) {
    const rows = await sharedQuery(
      `SELECT d.state, d.attempts, (SELECT count(*)::int FROM mail_digest_events e WHERE e.digest_id = d.id) AS events FROM mail_digests d WHERE d.user_id = $1 ORDER BY d.id`,
      [w.user.id],
    );
    return rows;
  }

  async function sharedQuery(text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    const pg = (await import('pg')).default;
    const { databaseUrl } = await import('../support/database.js');
    const client = new pg.Client({ connectionString: databaseUrl(database) });
    await client.connect();
    try {
      return (await client.query(text, params)).rows;
    } finally {
      await client.end();
    }
  }
});
