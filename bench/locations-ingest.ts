/**
 * Standalone benchmark of the location pipeline, over HTTP against the compiled service
 * and a real PostgreSQL:
 *   1. sustained ingest (reports/s, aggregation included) with 1 000- and 10 000-report batches;
 *   2. history-page latency for a tracker with two years of hourly points.
 *
 *   npx nest build && node dist/bench/locations-ingest.js
 *
 * Env: BENCH_PG_URL (a server admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_SECONDS (per ingest scenario, default 20), BENCH_CONCURRENCY (in-flight requests, default 4),
 * BENCH_PORT (default 3917), BENCH_LOG_LEVEL (service log level, default info as in production).
 * It creates and drops its own database `tps_bench_locations`.
 */
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import pg from 'pg';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchDatabaseUrl,
  dropDatabase,
  percentile,
  prepareDatabase,
  processCpuMs,
  reportBodies,
  runScript,
  signJwt,
  spawnBenchService,
  stopService,
  waitForServer,
} from './standalone.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const PORT = Number(process.env.BENCH_PORT ?? 3917);
const DB_NAME = 'tps_bench_locations';
const BASE = `http://127.0.0.1:${PORT}/api/v1`;
const TRACKERS = 1000;

/**
 * CPU used by the service process and by the PostgreSQL backends serving it. The host may be
 * busy with other work; CPU per report is what the pipeline itself costs, whatever the wall clock.
 */
class CpuMeter {
  constructor(
    private readonly db: pg.Client,
    private readonly serverPid: number,
  ) {}

  async sample(): Promise<{ server: number; postgres: number }> {
    const rows = await this.db.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return {
      server: processCpuMs(this.serverPid),
      postgres: rows.rows.reduce((sum, r) => sum + processCpuMs(r.pid), 0),
    };
  }
}

/** Pre-serialised bodies with globally unique report keys, so every report is new. */
function makeBodies(batchSize: number, count: number, trackerIds: number[], seq: { next: number }): string[] {
  const start = Date.now() - 400 * 86_400_000;
  return reportBodies(batchSize, count, seq, (n) => ({
    tracker_id: trackerIds[n % trackerIds.length],
    timestamp: new Date(start + n * 7).toISOString(),
    latitude: Math.round((35 + Math.random() * 30) * 1e5) / 1e5,
    longitude: Math.round((-10 + Math.random() * 140) * 1e5) / 1e5,
    confidence: n % 7,
    accuracy_m: Math.round(Math.random() * 5000) / 100,
    source: 'gps',
  }));
}

async function ingestScenario(token: string, batchSize: number, bodies: string[], meter?: CpuMeter) {
  const cpuBefore = await meter?.sample();
  const deadline = Date.now() + SECONDS * 1000;
  let nextBody = 0;
  let reports = 0;
  let accepted = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const worker = async () => {
    while (Date.now() < deadline && nextBody < bodies.length) {
      const body = bodies[nextBody++];
      const t0 = performance.now();
      const res = await fetch(`${BASE}/locations/reports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      const json = (await res.json()) as { accepted: number; duplicates: number; rejected: unknown[] };
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(json)}`);
      latencies.push(performance.now() - t0);
      reports += batchSize;
      accepted += json.accepted;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await meter?.sample();
  latencies.sort((a, b) => a - b);
  const perThousand = (before?: number, after?: number) =>
    before === undefined || after === undefined ? null : +(((after - before) * 1000) / reports).toFixed(2);
  const serverMs = perThousand(cpuBefore?.server, cpuAfter?.server);
  const postgresMs = perThousand(cpuBefore?.postgres, cpuAfter?.postgres);
  return {
    batch_size: batchSize,
    concurrency: CONCURRENCY,
    requests: latencies.length,
    reports,
    accepted,
    seconds: +seconds.toFixed(2),
    reports_per_second: Math.round(reports / seconds),
    request_ms_p50: +percentile(latencies, 50).toFixed(1),
    request_ms_p99: +percentile(latencies, 99).toFixed(1),
    bodies_exhausted: nextBody >= bodies.length,
    cpu_ms_per_1000_reports: { service: serverMs, postgres_backends: postgresMs },
    // What two cores doing nothing else would sustain at this CPU cost (service + its PostgreSQL backends).
    cpu_bound_reports_per_second_on_2_cores:
      serverMs !== null && postgresMs !== null ? Math.round((2 * 1_000_000) / (serverMs + postgresMs)) : null,
  };
}

async function historyScenario(
  token: string,
  trackerId: number,
  query: string,
  requests = 2000,
  path = `/trackers/${trackerId}/location-history`,
) {
  const url = `${BASE}${path}${query}`;
  const latencies: number[] = [];
  let total = 0;
  for (let i = 0; i < requests + 200; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const json = (await res.json()) as { total: number };
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    if (i >= 200) latencies.push(performance.now() - t0); // first 200 warm up
    total = json.total;
  }
  latencies.sort((a, b) => a - b);
  return {
    path,
    query: query || '(default)',
    total,
    requests,
    ms_p50: +percentile(latencies, 50).toFixed(2),
    ms_p99: +percentile(latencies, 99).toFixed(2),
  };
}

async function main(): Promise<void> {
  const pgVersion = await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);

  const child = spawnBenchService(DB_NAME, PORT, 'info');
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const setup = await db.query<{ ingest_id: number; admin_id: number }>(`
      WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
           b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id),
           r AS (INSERT INTO production_runs (description, brand_id) SELECT 'bench', id FROM b RETURNING id),
           t AS (INSERT INTO trackers (name, production_run_id) SELECT 'B-' || n, r.id FROM r, generate_series(1, ${TRACKERS + 1}) n RETURNING id),
           i AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('ingest', 'ingest@bench', 'x', '{ingest}') RETURNING id),
           a AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('admin', 'admin@bench', 'x', '{admin}') RETURNING id)
      SELECT (SELECT id FROM i) AS ingest_id, (SELECT id FROM a) AS admin_id, (SELECT count(*) FROM t) AS trackers`);
    const { ingest_id, admin_id } = setup.rows[0];
    const trackerRows = await db.query<{ id: number }>('SELECT id FROM trackers ORDER BY id');
    const trackerIds = trackerRows.rows.map((r) => r.id);
    const historyTracker = trackerIds.pop() as number;
    const ingestToken = signJwt(ingest_id, BENCH_SECRET);
    const adminToken = signJwt(admin_id, BENCH_SECRET);

    const results: Record<string, unknown> = {
      machine: {
        load_average_at_start: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model,
        memory_gb: Math.round(totalmem() / 2 ** 30),
        postgres: pgVersion,
        node: process.version,
      },
      settings: {
        seconds_per_scenario: SECONDS,
        concurrency: CONCURRENCY,
        service_log_level: process.env.BENCH_LOG_LEVEL ?? 'info',
        redis: Boolean(process.env.REDIS_URL),
      },
      ingest: [] as unknown[],
    };
    const meter = new CpuMeter(db, child.pid as number);
    const seq = { next: 0 };
    // Warm-up (JIT, pool, plan caches), not measured.
    await ingestScenario(ingestToken, 1000, makeBodies(1000, 20, trackerIds, seq));
    for (const batchSize of [1000, 10_000]) {
      const expected = Math.ceil((120_000 * SECONDS) / batchSize); // enough for 120 000 reports/s
      const bodies = makeBodies(batchSize, expected, trackerIds, seq);
      (results.ingest as unknown[]).push(await ingestScenario(ingestToken, batchSize, bodies, meter));
    }
    const counts = await db.query(`SELECT (SELECT count(*) FROM location_reports)::int AS reports,
      (SELECT count(*) FROM location_history_hourly)::int AS hourly, (SELECT count(*) FROM location_history_daily)::int AS daily`);
    results.tables_after_ingest = counts.rows[0];

    // Two years of hourly points for one tracker, inserted set-based, aggregates built by the rebuild SQL shape.
    await db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
       SELECT $1, g + interval '17 minutes', 48 + (extract(epoch FROM g)::bigint % 1000) / 1000.0, 2.3, 3, TRUE
         FROM generate_series(date_trunc('hour', now()) - interval '730 days', date_trunc('hour', now()) - interval '1 hour', interval '1 hour') g`,
      [historyTracker],
    );
    for (const [table, unit] of [
      ['location_history_hourly', 'hour'],
      ['location_history_daily', 'day'],
    ]) {
      await db.query(
        `INSERT INTO ${table} (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
         SELECT DISTINCT ON (tracker_id, date_trunc('${unit}', timestamp, 'UTC')) tracker_id, date_trunc('${unit}', timestamp, 'UTC'), id, timestamp, latitude, longitude, confidence
           FROM location_reports WHERE tracker_id = $1 AND eligible
          ORDER BY tracker_id, date_trunc('${unit}', timestamp, 'UTC'), timestamp DESC, id DESC`,
        [historyTracker],
      );
    }
    await db.query('VACUUM ANALYZE location_history_hourly, location_history_daily, location_reports, trackers');
    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
    results.history = [
      // Baseline: the cheapest authenticated route (JWT check + user row), to separate the request pipeline from the history query.
      await historyScenario(adminToken, historyTracker, '', 2000, '/users/me').catch((error: unknown) => ({
        path: '/users/me',
        skipped: String(error),
      })),
      await historyScenario(adminToken, historyTracker, ''),
      await historyScenario(adminToken, historyTracker, '?granularity=hourly'),
      await historyScenario(adminToken, historyTracker, '?granularity=hourly&order=asc&limit=1000'),
      await historyScenario(
        adminToken,
        historyTracker,
        `?granularity=hourly&start_date=${monthAgo}&end_date=${weekAgo}&order=asc`,
      ),
      await historyScenario(adminToken, historyTracker, '?granularity=hourly&skip=15000&limit=100'),
      await historyScenario(adminToken, historyTracker, '?granularity=daily&limit=100'),
    ];
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await stopService(child);
    await db.end().catch(() => undefined);
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

runScript(main);
