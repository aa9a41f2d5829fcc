/**
 * Production-run analytics benchmark, standalone:
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/analytics.js
 *
 * Builds (once; kept between runs) the database `tps_bench_analytics` with a JSON run of
 * BENCH_JSON_TRACKERS (10 000) trackers × 5 status entries (50 000) and a CSV run of
 * BENCH_CSV_TRACKERS (100 000) trackers × 5 entries, all with storage visits and 2/3 delivered.
 * Starts the service compiled alongside (dist/src/main.js) as a child process, then measures:
 *  - GET /analytics uncached (a distinct as_of per request defeats the cache), and cached;
 *  - the two SQL statements behind it (EXPLAIN ANALYZE execution times);
 *  - GET /analytics/csv of the big run, streamed and discarded by the client: rows/s, bytes and
 *    the service's peak RSS growth over its idle RSS (VmRSS sampled every 10 ms from /proc).
 *
 * Env: BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres), BENCH_PORT
 * (3947), BENCH_JSON_N (measured JSON requests, 30), REDIS_URL (optional). Drop the data with
 * `DROP DATABASE tps_bench_analytics`.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { aggregatesQuery, jsonRowsQuery, trackerRowsQuery } from '../src/analytics/analytics.sql.js';
import { AccessScope } from '../src/common/auth/access-scope.js';
import type { Sql } from '../src/infrastructure/database/db.js';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchAdminToken,
  benchDatabaseUrl,
  isListening,
  log,
  machineInfo,
  percentile,
  prepareDatabase,
  processCpuMs,
  runScript,
  spawnBenchService,
  stopService,
  waitForServer,
} from './standalone.js';

const PORT = Number(process.env.BENCH_PORT ?? 3947);
const JSON_TRACKERS = Number(process.env.BENCH_JSON_TRACKERS ?? 10_000);
const CSV_TRACKERS = Number(process.env.BENCH_CSV_TRACKERS ?? 100_000);
const JSON_N = Number(process.env.BENCH_JSON_N ?? 30);
const DB_NAME = 'tps_bench_analytics';
const AS_OF = new Date('2026-06-01T00:00:00Z');

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Two runs; 5 entries per tracker: CREATED, IN_TRANSIT, IN_STORAGE, IN_TRANSIT, then DELIVERED (2/3) or IN_STORAGE. */
async function generate(db: pg.Client): Promise<{ jsonRun: number; csvRun: number }> {
  log(`generating runs of ${JSON_TRACKERS} and ${CSV_TRACKERS} trackers`);
  await db.query(
    `TRUNCATE tracker_status_history, trackers, production_runs, brands, clients, storage_locations, delivery_locations RESTART IDENTITY CASCADE`,
  );
  await db.query(`
    WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
         b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id)
    INSERT INTO production_runs (description, brand_id, start_date) SELECT d, b.id, '2026-01-01' FROM b, unnest(ARRAY['json run', 'csv run']) d`);
  await db.query(`INSERT INTO storage_locations (name) SELECT 'Storage ' || n FROM generate_series(1, 20) n`);
  await db.query(`INSERT INTO delivery_locations (name) SELECT 'Delivery ' || n FROM generate_series(1, 20) n`);
  for (const [runId, count] of [
    [1, JSON_TRACKERS],
    [2, CSV_TRACKERS],
  ]) {
    await db.query(
      `INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, created_at, updated_at)
       SELECT 'R' || $1::int || '-TRK-' || n, $1::int, CASE WHEN n % 3 = 0 THEN 'IN_STORAGE' ELSE 'DELIVERED' END,
              CASE WHEN n % 3 = 0 THEN 1 + n % 20 END, 1 + n % 20, '2026-01-01'::timestamptz + n * interval '1 minute', now()
       FROM generate_series(1, $2::int) n`,
      [runId, count],
    );
  }
  await db.query(`
    INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id)
    SELECT t.id, e.status, t.created_at + e.age, e.storage, e.delivery
    FROM trackers t
    CROSS JOIN LATERAL (VALUES
      ('CREATED', interval '0', NULL::int, NULL::int),
      ('IN_TRANSIT', interval '1 day', NULL, NULL),
      ('IN_STORAGE', interval '2 days', 1 + (t.id * 7) % 20, NULL),
      ('IN_TRANSIT', interval '4 days 6 hours', NULL, NULL),
      (t.status, interval '6 days', t.storage_location_id, CASE WHEN t.status = 'DELIVERED' THEN t.delivery_location_id END)
    ) AS e(status, age, storage, delivery)
    ORDER BY t.created_at + e.age, t.id`);
  await db.query('VACUUM ANALYZE');
  log('generated and analyzed');
  return { jsonRun: 1, csvRun: 2 };
}

async function timeJson(path: string, token: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${PORT}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { tracker_analytics?: unknown[] };
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(body).slice(0, 200)}`);
  return performance.now() - started;
}

function percentiles(values: number[]): { p50: number; p95: number; min: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => Math.round(percentile(sorted, p) * 10) / 10;
  return { p50: at(50), p95: at(95), min: Math.round(sorted[0] * 10) / 10 };
}

/** Server-side execution time, with the service's session settings (jit off, work_mem). */
async function explainMs(db: pg.Client, query: Sql): Promise<number> {
  await db.query(`SET jit = off; SET work_mem = '32MB'`);
  const { rows } = await db.query<{ 'QUERY PLAN': [{ 'Execution Time': number }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`,
    query.values,
  );
  return Math.round(rows[0]['QUERY PLAN'][0]['Execution Time'] * 10) / 10;
}

async function main(): Promise<void> {
  const pgVersion = await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, false);

  // Something already answering on the port would be measured instead of this service.
  if (await isListening(PORT)) throw new Error(`port ${PORT} is in use; set BENCH_PORT`);
  // The service compiled next to this file (dist/bench/analytics.js → dist/src/main.js).
  const child = spawnBenchService(DB_NAME, PORT, 'warn', fileURLToPath(new URL('../src/main.js', import.meta.url)));
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT); // the service runs the migrations on start
    await db.connect();
    const counts = (
      await db.query<{ json: number; csv: number; entries: number }>(
        `SELECT (SELECT count(*) FROM trackers WHERE production_run_id = 1)::int AS json, (SELECT count(*) FROM trackers WHERE production_run_id = 2)::int AS csv,
                (SELECT count(*) FROM tracker_status_history)::int AS entries`,
      )
    ).rows[0];
    if (counts.json !== JSON_TRACKERS || counts.csv !== CSV_TRACKERS) await generate(db);
    else log(`reusing ${counts.json} + ${counts.csv} trackers, ${counts.entries} entries`);
    const token = await benchAdminToken(db, BENCH_SECRET);
    const entries = (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tracker_status_history h JOIN trackers t ON t.id = h.tracker_id WHERE t.production_run_id = 1`,
      )
    ).rows[0].n;

    // JSON: warm-up, then uncached (distinct as_of → distinct cache key) and cached.
    const jsonPath = (asOf: Date) =>
      `/api/v1/production-runs/1/analytics?as_of=${encodeURIComponent(asOf.toISOString())}`;
    for (let i = 0; i < 5; i++) await timeJson(jsonPath(new Date(AS_OF.getTime() - 1000 - i)), token);
    // The machine may be shared: besides wall time, count the CPU the service process and its
    // PostgreSQL backends spend per request (load-independent cost of one request).
    const backends = (
      await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tracker-pipeline'`,
      )
    ).rows.map((r) => r.pid);
    const databaseCpu = () => backends.reduce((sum, pid) => sum + processCpuMs(pid), 0);
    const serverCpu = () => processCpuMs(child.pid as number) + databaseCpu();
    const cpuBefore = serverCpu();
    const dbCpuBefore = databaseCpu();
    const uncached: number[] = [];
    for (let i = 0; i < JSON_N; i++) uncached.push(await timeJson(jsonPath(new Date(AS_OF.getTime() + i)), token));
    const uncachedCpuMs = Math.round((serverCpu() - cpuBefore) / JSON_N);
    const uncachedDbCpuMs = Math.round((databaseCpu() - dbCpuBefore) / JSON_N);
    const cached: number[] = [];
    for (let i = 0; i < JSON_N; i++) cached.push(await timeJson(jsonPath(AS_OF), token));
    const scope = AccessScope.admin();
    const sql = {
      json_cursor_ms: await explainMs(db, jsonRowsQuery(scope, 1, AS_OF)),
      aggregates_ms: await explainMs(db, aggregatesQuery(scope, 1, AS_OF)),
      csv_cursor_ms: await explainMs(db, trackerRowsQuery(scope, 1, AS_OF)),
    };

    // CSV: a small export first (code paths, pool), then the big one streamed and discarded.
    const download = async (runId: number) => {
      const res = await fetch(
        `http://127.0.0.1:${PORT}/api/v1/production-runs/${runId}/analytics/csv?as_of=${AS_OF.toISOString()}`,
        {
          headers: { Authorization: `Bearer ${token}` },
        },
      );
      if (res.status !== 200 || !res.body) throw new Error(`CSV answered ${res.status}`);
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        for (const b of chunk) if (b === 10) lines++;
      }
      return { bytes, lines };
    };
    await download(1);
    await new Promise((r) => setTimeout(r, 1000));
    const pid = child.pid as number;
    const idleRss = rssBytes(pid);
    let peakRss = idleRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(pid))), 10);
    const csvCpuBefore = serverCpu();
    const started = performance.now();
    const csv = await download(2);
    const seconds = (performance.now() - started) / 1000;
    const csvCpuSeconds = (serverCpu() - csvCpuBefore) / 1000;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, rssBytes(pid));

    const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
    console.log(
      JSON.stringify(
        {
          load_average_1m: loadavg()[0],
          machine: machineInfo(pgVersion),
          command: 'npx tsc -p tsconfig.build.json && node dist/bench/analytics.js',
          json: {
            trackers: JSON_TRACKERS,
            status_entries: entries,
            requests: JSON_N,
            uncached_ms: percentiles(uncached),
            uncached_server_cpu_ms_per_request: {
              total: uncachedCpuMs,
              postgres: uncachedDbCpuMs,
              node: uncachedCpuMs - uncachedDbCpuMs,
            },
            cached_ms: percentiles(cached),
            sql_execution_ms: sql,
            goal: 'uncached < 150 ms',
          },
          csv: {
            trackers: CSV_TRACKERS,
            seconds: Math.round(seconds * 100) / 100,
            rows_per_second: Math.round(CSV_TRACKERS / seconds),
            server_cpu_seconds: csvCpuSeconds,
            megabytes: mb(csv.bytes),
            lines: csv.lines,
            idle_rss_mb: mb(idleRss),
            peak_rss_mb: mb(peakRss),
            peak_rss_growth_mb: mb(peakRss - idleRss),
            goal: 'RSS growth < 50 MB',
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await db.end().catch(() => undefined);
    await stopService(child);
  }
}

runScript(main);
