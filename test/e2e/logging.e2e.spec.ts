import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { call } from '../support/reliability.js';
import { buildIfNeeded, freePort, spawnProductionService, type ServiceProcess } from '../support/service-process.js';

/**
 * The built service in production (a child process, stdout captured): its log is JSON lines, Nest's
 * route mapping is not at info, and a failed user insert is logged without the statement's data —
 * not the new password hash, not the e-mail address.
 */
const ADMIN = { email: 'logging-admin@example.com', password: 'logging-admin-pass' };
const MARKER = { email: 'marker-7f3a@example.com', password: 'marker-password-7f3a', name: 'refuse-me 7f3a' };
/** Credentials a client may put in a query string, each with a value that must never reach the log. */
const QUERY_SECRETS = {
  ticket: 'ticket-e41b',
  token: 'token-e41b',
  access_token: 'access-e41b',
  api_key: 'apikey-e41b',
  key: 'key-e41b',
  secret: 'secret-e41b',
  'X-Amz-Signature': 'signature-e41b',
  Client_Secret: 'clientsecret-e41b',
};
const SHARE_TOKEN = 'sharelinktoken0sharelinktoken0sharelink7b3x';
const BANNER = /^(Tracker Pipeline Service ready in \d+ ms| {2}\S.*|SIGTERM received: .*)$/;

describe('Logging of the running service (production)', () => {
  let database: string;
  let dataDir: string;
  let service: ServiceProcess;
  let base: string;
  let lines: string[];
  let logged: Array<Record<string, unknown>>;
  let ticket: string;

  beforeAll(async () => {
    buildIfNeeded();
    database = await createTestDatabase();
    // Every insert of a user named "refuse-me…" fails (SQLSTATE P0001) with the whole row, hash
    // included, in the error's detail — as a not-null or check violation reports it.
    const client = new pg.Client({ connectionString: databaseUrl(database) });
    await client.connect();
    await client.query(`
      CREATE FUNCTION test_refuse_user() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.name LIKE 'refuse-me%' THEN
          RAISE EXCEPTION 'refused by the test trigger' USING ERRCODE = 'P0001', DETAIL = 'row: ' || NEW::text;
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_user BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION test_refuse_user();`);
    await client.end();
    dataDir = mkdtempSync(join(tmpdir(), 'tps-logging-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = spawnProductionService({ database, dataDir, port, admin: ADMIN, logLevel: 'info' });
    await service.waitForOutput(/Tracker Pipeline Service ready in \d+ ms/, 60_000);

    const login = await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN });
    const token = (login.body as { access_token: string }).access_token;
    const refused = await call(base, 'POST', '/api/v1/users', { token, body: MARKER });
    expect(refused).toEqual({ status: 500, body: { detail: 'Internal server error' } });
    // A NUL in a name: whatever the answer, the name is not logged either.
    await call(base, 'POST', '/api/v1/users', {
      token,
      body: { ...MARKER, email: 'nul-zq9x@example.com', name: 'nul\u0000 zq9x' },
    });
    // Credentials in query strings: a real stream ticket on the stream, and every other kind on a list.
    const issued = await call(base, 'POST', '/api/v1/notifications/stream-ticket', { token });
    ticket = (issued.body as { ticket: string }).ticket;
    const stream = await fetch(`${base}/api/v1/notifications/stream?ticket=${encodeURIComponent(ticket)}`);
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    await call(base, 'GET', `/api/v1/notifications/stream?ticket=${QUERY_SECRETS.ticket}`);
    const query = Object.entries(QUERY_SECRETS)
      .map(([name, value]) => `${name}=${value}`)
      .join('&');
    await call(base, 'GET', `/api/v1/clients?${query}&limit=5`, { token });
    // A share link's token is the path of its page and public view.
    await call(base, 'GET', `/track/${SHARE_TOKEN}`);
    await call(base, 'GET', `/api/v1/public/track/${SHARE_TOKEN}`);
    await service.stop('SIGTERM');
    lines = service.stdout().split('\n').filter(Boolean);
    logged = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  }, 120_000);

  afterAll(async () => {
    await service?.cleanup();
    if (database) await dropTestDatabase(database);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stdout is JSON log lines, apart from the start banner', () => {
    expect(lines.filter((line) => !line.startsWith('{') && !BANNER.test(line))).toEqual([]);
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 30, context: 'NestApplication', msg: 'Nest application successfully started' }),
    );
  });

  it('one line per request: id, method, URL, status and time, at the level its status calls for', () => {
    const requests = logged.filter((entry) => entry.req !== undefined && entry.responseTime !== undefined);
    const login = requests.find((entry) => (entry.req as { url?: string }).url === '/api/v1/auth/login/json');
    expect(login).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        method: 'POST',
        url: '/api/v1/auth/login/json',
        remoteAddress: expect.any(String),
      },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    const failed = requests.filter((entry) => (entry.res as { statusCode?: number }).statusCode === 500);
    expect(failed[0]).toMatchObject({
      level: 50,
      msg: 'request errored',
      req: { method: 'POST', url: '/api/v1/users' },
    });
    // The exception filter's own line names the same request.
    const filterLine = logged.find((entry) => entry.msg === 'request failed with 500');
    expect(filterLine?.reqId).toBe((failed[0].req as { id: string }).id);
    // Headers (the bearer token among them) are not part of a request line.
    expect(JSON.stringify(requests)).not.toMatch(/authorization|Bearer/i);
  });

  it('says once, at start, that e-mail is off when SMTP_URL is not set', () => {
    const off = logged.filter((entry) => entry.msg === 'E-mail notifications are off: SMTP_URL is not set');
    expect(off).toHaveLength(1);
    expect(off[0]).toMatchObject({ level: 30 });
  });

  it('says once, at start, that MQTT ingest is off when MQTT_URL is not set', () => {
    const off = logged.filter((entry) => entry.msg === 'MQTT ingest is off: MQTT_URL is not set');
    expect(off).toHaveLength(1);
    expect(off[0]).toMatchObject({ level: 30 });
  });

  it("Nest's route mapping and module lines are not logged at info", () => {
    const chatter = logged.filter((entry) =>
      ['RoutesResolver', 'RouterExplorer', 'InstanceLoader'].includes(String(entry.context)),
    );
    expect(chatter).toEqual([]);
  });

  it('the failed insert is logged with SQLSTATE, message and statement, and none of its values', () => {
    const failure = logged.find(
      (entry) => entry.msg === 'request failed with 500' && (entry.err as { code?: string })?.code === 'P0001',
    );
    expect(failure?.err).toMatchObject({
      type: 'QueryFailedError',
      code: 'P0001',
      message: 'refused by the test trigger',
      operation: 'INSERT INTO users',
      statement: expect.stringMatching(/^q_[0-9a-f]{20}$/),
    });
    const output = service.stdout() + service.stderr();
    for (const secret of ['argon2id', MARKER.email, MARKER.password, 'zq9x', 'row: '])
      expect(output).not.toContain(secret);
  });

  it('credentials in query strings and share-link tokens in paths are redacted in every line; the rest of the URL stays', () => {
    const output = service.stdout() + service.stderr();
    for (const secret of [ticket, SHARE_TOKEN, ...Object.values(QUERY_SECRETS)]) expect(output).not.toContain(secret);
    const urls = logged.map((entry) => (entry.req as { url?: string } | undefined)?.url);
    expect(urls).toContain('/track/[redacted]');
    expect(urls).toContain('/api/v1/public/track/[redacted]');
    expect(urls).toContain('/api/v1/notifications/stream?ticket=[redacted]');
    expect(urls).toContain(
      `/api/v1/clients?${Object.keys(QUERY_SECRETS)
        .map((name) => `${name}=[redacted]`)
        .join('&')}&limit=5`,
    );
  });
});
