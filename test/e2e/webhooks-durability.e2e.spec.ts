import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closeApps, createPeerApp, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { eventually, mailWorld, newTracker, setStatus, sleep } from '../support/mail.js';
import { call, waitFor } from '../support/reliability.js';
import { buildIfNeeded, freePort, spawnService, type ServiceProcess } from '../support/service-process.js';
import { TEST_JWT_SECRET } from '../support/test-config.js';
import { createWebhook, TestReceiver, verify, webhookEnv } from '../support/webhooks.js';

const ADMIN = { email: 'hooks-admin@example.com', password: 'hooks-pass-123' };

/**
 * Deliveries live in PostgreSQL: a service killed (SIGKILL) while attempts are in flight loses
 * nothing, and the next one re-sends them with the same webhook-id once their lease lapses; two
 * instances share the queue without ever making one attempt twice.
 */
describe('webhooks: durability (the built service killed mid-delivery)', () => {
  let database: string;
  let dataDir: string;
  let port: number;
  let service: ServiceProcess | undefined;
  let receiver: TestReceiver;
  let answering = false;
  const db = () => new pg.Client({ connectionString: databaseUrl(database) });

  const start = async () => {
    service = spawnService({
      NODE_ENV: 'development',
      PORT: String(port),
      DATABASE_URL: databaseUrl(database),
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      SEED_DEMO_DATA: 'false',
      GEOFENCE_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      // More attempts in flight than an event target's default listener limit (10).
      ...webhookEnv({ WEBHOOK_CONCURRENCY: '16', WEBHOOK_PER_WEBHOOK_CONCURRENCY: '12' }),
    });
    await waitFor(
      async () => (await call(`http://127.0.0.1:${port}`, 'GET', '/openapi.json', { timeoutMs: 1000 })).status === 200,
      60_000,
    ).catch((error: Error) => {
      throw new Error(`service did not start: ${error.message}\n${service?.stdout()}${service?.stderr()}`);
    });
  };

  beforeAll(async () => {
    buildIfNeeded();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'tps-hooks-'));
    port = await freePort();
    receiver = await TestReceiver.start(() => (answering ? { status: 200 } : 'hang'));
  }, 180_000);
  afterAll(async () => {
    await service?.cleanup();
    await receiver?.close();
    if (database) await dropTestDatabase(database);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('deliveries in flight at a SIGKILL are re-sent with the same webhook-id after a restart; none is lost', async () => {
    await start();
    const base = `http://127.0.0.1:${port}`;
    const login = await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN });
    const token = (login.body as { access_token: string }).access_token;
    const client = db();
    await client.connect();
    try {
      const { rows } = await client.query<{ id: number }>(
        `WITH c AS (INSERT INTO clients (name) VALUES ('hooks') RETURNING id),
              b AS (INSERT INTO brands (name, client_id) SELECT 'hooks', id FROM c RETURNING id),
              r AS (INSERT INTO production_runs (description, brand_id, start_date) SELECT 'hooks', id, now() FROM b RETURNING id)
         INSERT INTO trackers (name, production_run_id, status) SELECT 'TRK-hooks-' || n, r.id, 'CREATED' FROM r, generate_series(1, 13) n
         RETURNING id`,
      );
      const hook = await call(base, 'POST', '/api/v1/webhooks', {
        token,
        body: { url: receiver.url, event_types: ['tracker.status_changed'] },
      });
      expect(hook.status).toBe(201);
      const secret = (hook.body as { secret: string }).secret;
      for (const { id } of rows)
        expect(
          (await call(base, 'POST', `/api/v1/trackers/${id}/status`, { token, body: { status: 'IN_TRANSIT' } })).status,
        ).toBe(201);
      // Twelve attempts in flight (the per-webhook share), the thirteenth still waiting.
      await receiver.waitFor(12);
      await sleep(300);
      const inFlight = new Set(receiver.ids);
      expect(inFlight.size).toBe(12);
      // Each attempt in flight listens for the shutdown: no listener-leak warning.
      expect(service!.stderr()).not.toContain('MaxListenersExceededWarning');

      expect((await service!.stop('SIGKILL', 10_000))?.signal).toBe('SIGKILL');
      answering = true;
      await start();

      const delivered = await eventually(
        async () => (await client.query(`SELECT id::text, status, attempts FROM webhook_deliveries ORDER BY id`)).rows,
        (list) => list.length === 13 && list.every((d) => d.status === 'succeeded'),
        90_000,
      );
      const resent = receiver.requests.slice(12);
      for (const id of inFlight) expect(resent.map((r) => r.id)).toContain(id);
      expect(new Set(receiver.ids)).toEqual(new Set(delivered.map((d: { id: string }) => d.id)));
      for (const request of receiver.requests) expect(verify(secret, request)).toBeTruthy();
    } finally {
      await client.end();
    }
  }, 180_000);
});

describe('webhooks: two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const receivers: TestReceiver[] = [];

  beforeAll(async () => {
    a = await createTestApp({ env: webhookEnv() });
    b = await createPeerApp(a, { env: webhookEnv() });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await closeApps(b, a);
  });

  it('share the deliveries and never make one attempt twice', async () => {
    const worlds = [await mailWorld(a), await mailWorld(a)];
    const hooks: { id: number; receiver: TestReceiver }[] = [];
    for (const w of worlds) {
      // Every third request is refused once, so retries are claimed by either instance too.
      const receiver = await TestReceiver.start((_, i) => ({ status: i % 3 === 2 ? 503 : 200 }));
      receivers.push(receiver);
      hooks.push({ id: (await createWebhook(a, w.user, { url: receiver.url })).id, receiver });
    }
    await Promise.all(
      worlds.map(async (w, i) => {
        const app = i === 0 ? a : b;
        for (let k = 0; k < 10; k++) await setStatus(app, w, (await newTracker(app, w)).id, 'IN_TRANSIT');
      }),
    );
    const rows = await eventually(
      async () =>
        (await a.db.query(
          `SELECT id::text, webhook_id, status, attempts FROM webhook_deliveries WHERE webhook_id = ANY($1) ORDER BY id`,
          [hooks.map((h) => h.id)],
        )) as { id: string; webhook_id: number; status: string; attempts: number }[],
      (list) => list.length === 20 && list.every((d) => d.status === 'succeeded'),
      30_000,
    );
    await sleep(500);
    for (const { id, receiver } of hooks) {
      const mine = rows.filter((row) => row.webhook_id === id);
      expect(new Set(receiver.ids)).toEqual(new Set(mine.map((row) => row.id)));
      // Each request is one recorded attempt: none was sent twice.
      for (const row of mine)
        expect([row.id, receiver.ids.filter((x) => x === row.id).length]).toEqual([row.id, row.attempts]);
    }
  }, 60_000);
});
