import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TEST_JWT_SECRET } from '../support/app.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { call, waitFor } from '../support/reliability.js';
import { buildIfNeeded, freePort, refused } from '../support/service-process.js';

/** after SIGTERM the process finishes in-flight requests and exits within 10 s. */
const EXIT_BOUND_MS = 10_000;
const ADMIN = { email: 'shutdown-admin@example.com', password: 'shutdown-pass-123' };

describe('Reliability: SIGTERM under load (the built service as a child process)', () => {
  let database: string;
  let proxy: FaultProxy;
  let child: ChildProcess;
  let exited: Promise<{ code: number | null; at: number }>;
  let dataDir: string;
  let port: number;
  let base: string;
  let output = '';

  beforeAll(async () => {
    // `npm start` runs dist/; build it when sources are newer (cached between runs).
    buildIfNeeded();
    database = await createTestDatabase();
    // Requests are made slow (and so in flight at SIGTERM) by delaying the database, not the service.
    proxy = await FaultProxy.forUrl(databaseUrl(database));
    dataDir = mkdtempSync(join(tmpdir(), 'tps-shutdown-'));
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        PORT: String(port),
        DATABASE_URL: proxy.rewrite(databaseUrl(database)),
        JWT_SECRET: TEST_JWT_SECRET,
        DATA_DIR: dataDir,
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        SEED_DEMO_DATA: 'false',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve({ code, at: performance.now() })));
    await waitFor(async () => (await call(base, 'GET', '/metrics', { timeoutMs: 1000 })).status === 200, 60_000).catch(
      (error: Error) => {
        throw new Error(`service did not start: ${error.message}\n${output}`);
      },
    );
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await proxy?.close();
    if (database) await dropTestDatabase(database);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes in-flight requests, refuses new connections and exits 0 within 10 s', async () => {
    const login = await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN });
    expect(login.status).toBe(200);
    const token = (login.body as { access_token: string }).access_token;
    const direct = new pg.Client({ connectionString: databaseUrl(database) });
    direct.on('error', () => undefined);
    await direct.connect();
    const [{ id: trackerId }] = (
      await direct.query<{ id: number }>(
        `WITH c AS (INSERT INTO clients (name) VALUES ('shutdown') RETURNING id),
              b AS (INSERT INTO brands (name, client_id) SELECT 'shutdown', id FROM c RETURNING id),
              r AS (INSERT INTO production_runs (description, brand_id, start_date) SELECT 'shutdown', id, now() FROM b RETURNING id)
         INSERT INTO trackers (name, production_run_id, status) SELECT 'TRK-shutdown', id, 'CREATED' FROM r RETURNING id`,
      )
    ).rows;

    // Every query now takes ≥ 400 ms, so these requests are still running when SIGTERM arrives.
    await proxy.delay(200);
    const batch = (n: number) => ({
      reports: Array.from({ length: 50 }, (_, k) => ({
        tracker_id: trackerId,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, n, k)).toISOString(),
        latitude: 48.1,
        longitude: 11.5,
        confidence: 3,
      })),
    });
    const inFlight = [
      ...Array.from({ length: 4 }, (_, n) =>
        call(base, 'POST', '/api/v1/locations/reports', { token, body: batch(n) }),
      ),
      ...Array.from({ length: 4 }, () => call(base, 'GET', '/api/v1/clients', { token })),
    ];
    // SIGTERM once the service is handling all of them (plus the scrape itself).
    await waitFor(async () => {
      const metrics = await call(base, 'GET', '/metrics');
      return Number(/^http_requests_in_flight (\d+)/m.exec(String(metrics.body))?.[1]) >= inFlight.length + 1;
    }, 10_000);
    const signalledAt = performance.now();
    child.kill('SIGTERM');

    await waitFor(() => refused(port), 2000);
    const refusedMs = Math.round(performance.now() - signalledAt);
    const answers = await Promise.all(inFlight);
    const exit = await exited;
    const exitMs = Math.round(exit.at - signalledAt);
    console.log(
      `[reliability] SIGTERM: new connections refused after ${refusedMs} ms, ${answers.length} in-flight requests answered, exit ${exit.code} after ${exitMs} ms`,
    );

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    expect(exit.code).toBe(0);
    expect(exitMs).toBeLessThan(EXIT_BOUND_MS);
    expect(output).toContain('SIGTERM received');
    // The acknowledged ingest batches are stored.
    const stored = await direct.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM location_reports WHERE tracker_id = $1',
      [trackerId],
    );
    expect(stored.rows[0].n).toBe(4 * 50);
    await direct.end();
  });
});
