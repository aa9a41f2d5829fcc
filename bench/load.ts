/**
 * `npm run test:load`: 60 s of mixed traffic at 100 connections against the compiled
 * service — tracker list, tracker detail, location history, status writes and ingest batches —
 * then prints p50/p99 per request kind and overall and fails (exit 1) on any 5xx or socket error.
 *
 * `npm run test:load -- --smoke` (or LOAD_SMOKE=1), run by CI: the same mix, bounded to a few hundred
 * requests on 10 connections against 200 trackers, the whole run (start included) cut at 60 s; it
 * fails on any answer other than 2xx as well, so a route the mix uses that starts refusing is caught.
 *
 * Uses a fresh database (`tps_load`, the smoke `tps_load_smoke`) on the server of BENCH_PG_URL /
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped at the end; REDIS_URL
 * is passed through. The service runs in production mode: readiness is polled on the public
 * /openapi.json, and /metrics is scraped with a METRICS_TOKEN the script gives the service.
 * Env: LOAD_SECONDS (60), LOAD_CONNECTIONS (100), LOAD_TRACKERS (2000), LOAD_PORT (3919).
 */
import autocannon, { type RequestSpec } from 'autocannon';
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import {
  DEFAULT_PG_URL,
  dropDatabase,
  isListening,
  percentile,
  prepareDatabase,
  runScript,
  signJwt,
  spawnService,
  stopService,
  waitForServer,
  withClient,
  withDatabase,
} from './standalone.js';

const SMOKE = process.argv.includes('--smoke') || process.env.LOAD_SMOKE === '1';
const SECONDS = SMOKE ? 20 : Number(process.env.LOAD_SECONDS ?? 60);
const CONNECTIONS = SMOKE ? 10 : Number(process.env.LOAD_CONNECTIONS ?? 100);
const TRACKERS = SMOKE ? 200 : Number(process.env.LOAD_TRACKERS ?? 2000);
/** The smoke's request budget; the full run is bounded by time only. */
const SMOKE_REQUESTS = 400;
/** The smoke's ceiling for everything: database, start, seed, traffic, stop. */
const SMOKE_DEADLINE_MS = 60_000;
const PORT = Number(process.env.LOAD_PORT ?? 3919);
const DB_NAME = SMOKE ? 'tps_load_smoke' : 'tps_load';
const JWT_SECRET = 'load-secret-0123456789-0123456789-0123456789';
const METRICS_TOKEN = `load-metrics-${randomUUID()}`;
// argon2id of "password123" (as test/support/factories.ts): the admin row needs some hash.
const PASSWORD_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$dGVzdHNhbHR0ZXN0c2FsdA$JUARRYmTDnb5MxEDrThqtHuvEwZy7dcfNb1Zy6+BoM8';

type Kind = 'list' | 'detail' | 'history' | 'status_write' | 'ingest';
/** Share of each kind in every 10 requests. */
const MIX: Kind[] = [
  'list',
  'list',
  'detail',
  'detail',
  'history',
  'history',
  'status_write',
  'ingest',
  'ingest',
  'list',
];

function serverUrl(database: string): string {
  return withDatabase(process.env.BENCH_PG_URL ?? process.env.DATABASE_URL ?? DEFAULT_PG_URL, database);
}

/** Trackers with a two-entry status history and a day of hourly location history each. */
async function seed(url: string): Promise<{ adminId: number; firstTracker: number }> {
  return withClient(url, async (c) => {
    const admin = await c.query<{ id: number }>(
      `INSERT INTO users (name, email, password_hash, roles, client_list) VALUES ('Load', 'load@example.com', $1, ARRAY['admin'], '{}') RETURNING id`,
      [PASSWORD_HASH],
    );
    const run = await c.query<{ id: number }>(
      `WITH cl AS (INSERT INTO clients (name) VALUES ('Load client') RETURNING id),
            b AS (INSERT INTO brands (name, client_id) SELECT 'Load brand', id FROM cl RETURNING id)
       INSERT INTO production_runs (description, brand_id, start_date) SELECT 'Load run', id, now() - interval '30 days' FROM b RETURNING id`,
    );
    const trackers = await c.query<{ first: number }>(
      `WITH t AS (
         INSERT INTO trackers (name, production_run_id, status, created_at, updated_at)
         SELECT 'LOAD-' || g, $1, 'IN_TRANSIT', now() - interval '10 days', now() - interval '9 days' FROM generate_series(1, $2) g
         RETURNING id)
       SELECT min(id)::int AS first FROM t`,
      [run.rows[0].id, TRACKERS],
    );
    const first = trackers.rows[0].first;
    await c.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp)
       SELECT id, s.status, s.ts FROM trackers,
         LATERAL (VALUES ('CREATED', now() - interval '10 days'), ('IN_TRANSIT', now() - interval '9 days')) AS s(status, ts)
        WHERE production_run_id = $1`,
      [run.rows[0].id],
    );
    await c.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
       SELECT t.id, date_trunc('hour', now()) - make_interval(hours => h), 50 + t.id % 10, 8 + h / 100.0, 3, true
         FROM trackers t, generate_series(1, 24) h WHERE t.production_run_id = $1`,
      [run.rows[0].id],
    );
    await c.query(
      `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       SELECT tracker_id, date_trunc('hour', timestamp), id, timestamp, latitude, longitude, confidence FROM location_reports`,
    );
    await c.query(
      `INSERT INTO location_history_daily (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       SELECT DISTINCT ON (tracker_id, date_trunc('day', timestamp)) tracker_id, date_trunc('day', timestamp), id, timestamp, latitude, longitude, confidence
         FROM location_reports ORDER BY tracker_id, date_trunc('day', timestamp), timestamp DESC`,
    );
    await c.query('ANALYZE');
    return { adminId: admin.rows[0].id, firstTracker: first };
  });
}

async function main(): Promise<void> {
  if (SMOKE) {
    // Ends a smoke that hangs anywhere (even in the cleanup) instead of holding CI.
    setTimeout(() => {
      console.error(`FAIL: load smoke still running after ${SMOKE_DEADLINE_MS / 1000} s`);
      process.exit(1);
    }, SMOKE_DEADLINE_MS).unref();
  }
  if (await isListening(PORT)) throw new Error(`something already answers on 127.0.0.1:${PORT} (set LOAD_PORT)`);
  const adminUrl = serverUrl('postgres');
  await prepareDatabase(adminUrl, DB_NAME, true);
  const url = serverUrl(DB_NAME);
  const child = spawnService({
    port: PORT,
    databaseUrl: url,
    jwtSecret: JWT_SECRET,
    logLevel: 'warn',
    env: {
      ADMIN_EMAIL: 'first-admin@example.com',
      ADMIN_PASSWORD: 'first-admin-password',
      CACHE_PREFIX: `load-${randomUUID()}`,
      METRICS_TOKEN,
    },
  });
  const base = `http://127.0.0.1:${PORT}`;
  try {
    // /openapi.json is public in every mode (production guards /metrics and the health routes).
    await waitForServer(child, PORT, { attempts: SMOKE ? 150 : 600 });
    const { adminId, firstTracker } = await seed(url);
    const token = signJwt(adminId, JWT_SECRET);
    const tracker = () => firstTracker + Math.floor(Math.random() * TRACKERS);
    let n = 0;
    let ingestSeq = 0;
    const latencies: Record<Kind, number[]> = { list: [], detail: [], history: [], status_write: [], ingest: [] };
    const statuses: Record<string, number> = {};
    const request = (kind: Kind): RequestSpec => {
      const json = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
      switch (kind) {
        case 'list':
          return {
            method: 'GET',
            path: `/api/v1/trackers?limit=50&skip=${Math.floor(Math.random() * (TRACKERS - 50))}`,
            headers: json,
          };
        case 'detail':
          return { method: 'GET', path: `/api/v1/trackers/${tracker()}`, headers: json };
        case 'history':
          return { method: 'GET', path: `/api/v1/trackers/${tracker()}/location-history`, headers: json };
        case 'status_write':
          return {
            method: 'POST',
            path: `/api/v1/trackers/${tracker()}/status`,
            headers: json,
            body: JSON.stringify({ status: 'IN_TRANSIT' }),
          };
        case 'ingest': {
          const id = tracker();
          const start = Date.now() - 3_600_000;
          const seq = ingestSeq++;
          const reports = Array.from({ length: 10 }, (_, k) => ({
            tracker_id: id,
            timestamp: new Date(start + seq * 10 + k).toISOString(),
            latitude: 50 + k / 1000,
            longitude: 8.5,
            confidence: k === 0 ? 1 : 3,
          }));
          return {
            method: 'POST',
            path: '/api/v1/locations/reports',
            headers: json,
            body: JSON.stringify({ reports }),
          };
        }
      }
    };
    // autocannon calls setupRequest then onResponse per request on one connection, in order.
    const kindOf = new Map<unknown, { kind: Kind; started: number }>();
    const spec = {
      setupRequest: (_req: RequestSpec, context: Record<string, unknown>) => {
        const kind = MIX[n++ % MIX.length];
        kindOf.set(context, { kind, started: performance.now() });
        return request(kind);
      },
      onResponse: (status: number, _body: string, context: Record<string, unknown>) => {
        const entry = kindOf.get(context);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (entry) latencies[entry.kind].push(performance.now() - entry.started);
      },
    } as RequestSpec;

    console.log(
      `load${SMOKE ? ` smoke (at most ${SMOKE_REQUESTS} requests)` : ''}: ${SECONDS} s, ${CONNECTIONS} connections, ${TRACKERS} trackers, mix ${MIX.join(',')}; ${cpus().length} CPUs, load ${loadavg()[0].toFixed(2)}`,
    );
    const result = await autocannon({
      url: base,
      connections: CONNECTIONS,
      duration: SECONDS,
      ...(SMOKE ? { maxOverallRequests: SMOKE_REQUESTS } : {}),
      requests: [spec],
      timeout: 10,
    });
    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    if (!metrics.ok) throw new Error(`GET /metrics answered ${metrics.status}: ${await metrics.text()}`);
    const scrape = await metrics.text();
    const refused = /^db_pool_refused_total\{reason="exhausted"\} (\d+)/m.exec(scrape)?.[1] ?? '0';

    const rows = (Object.keys(latencies) as Kind[]).map((kind) => {
      const sorted = latencies[kind].sort((a, b) => a - b);
      return {
        kind,
        requests: sorted.length,
        p50_ms: Math.round(percentile(sorted, 50)),
        p99_ms: Math.round(percentile(sorted, 99)),
      };
    });
    console.table(rows);
    const summary = {
      seconds: SECONDS,
      connections: CONNECTIONS,
      requests: result.requests.total,
      rps: Math.round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      max_ms: result.latency.max,
      statuses,
      status_5xx: result['5xx'],
      errors: result.errors,
      timeouts: result.timeouts,
      pool_refusals: Number(refused),
    };
    console.log(JSON.stringify(summary, null, 2));
    if (result['5xx'] > 0 || result.errors > 0 || result.timeouts > 0) {
      console.error('FAIL: 5xx responses or socket errors under load');
      process.exitCode = 1;
    }
    if (SMOKE) {
      const refusedAnswers = Object.entries(statuses).filter(([status]) => !/^2\d\d$/.test(status));
      const silent = rows.filter((row) => row.requests === 0).map((row) => row.kind);
      if (refusedAnswers.length > 0 || silent.length > 0 || result.requests.total === 0) {
        console.error(
          `FAIL: smoke answers other than 2xx ${JSON.stringify(Object.fromEntries(refusedAnswers))}, kinds without answers [${silent.join(', ')}]`,
        );
        process.exitCode = 1;
      }
    }
  } finally {
    await stopService(child);
    await dropDatabase(adminUrl, DB_NAME);
  }
}

runScript(main);
