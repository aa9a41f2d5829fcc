/**
 * Health endpoint latency on a large data set: generates N raw location reports with
 * INSERT ... SELECT generate_series into a dedicated database `tps_bench_health` (kept between runs;
 * regenerated when the report count differs), builds consistent aggregates and status histories,
 * then measures GET /api/v1/health/basic and /health/pipeline over HTTP against the compiled service.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/health.js
 *
 * Env: BENCH_PG_URL (server admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_REPORTS (default 10 000 000; 1 000 reports per tracker, 10 minutes apart), BENCH_PORT
 * (default 3918), BENCH_BASIC_N / BENCH_PIPELINE_N (measured requests, default 500 / 100),
 * REDIS_URL (optional; the in-process cache store otherwise). Drop the database afterwards with
 * `DROP DATABASE tps_bench_health`.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchAdminToken,
  benchDatabaseUrl,
  log,
  machineInfo,
  percentile,
  prepareDatabase,
  runScript,
  spawnBenchService,
  stopService,
  waitForServer,
} from './standalone.js';

const REPORTS = Number(process.env.BENCH_REPORTS ?? 10_000_000);
const REPORTS_PER_TRACKER = 1000;
const TRACKERS = Math.max(1, Math.ceil(REPORTS / REPORTS_PER_TRACKER));
const PORT = Number(process.env.BENCH_PORT ?? 3918);
const BASIC_N = Number(process.env.BENCH_BASIC_N ?? 500);
const PIPELINE_N = Number(process.env.BENCH_PIPELINE_N ?? 100);
const CHUNK = 1_000_000;
const DB_NAME = 'tps_bench_health';

/** Trackers with a 3-entry status history, then the raw reports, then aggregates rebuilt from raw. */
async function generate(db: pg.Client): Promise<void> {
  log(`generating ${REPORTS} reports for ${TRACKERS} trackers`);
  await db.query(`TRUNCATE location_history_hourly, location_history_daily, location_reports, tracker_status_history, trackers,
                    production_runs, brands, clients RESTART IDENTITY CASCADE`);
  await db.query(`
    WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
         b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id)
    INSERT INTO production_runs (description, brand_id) SELECT 'bench run ' || n, b.id FROM b, generate_series(1, 10) n`);
  await db.query(
    `INSERT INTO trackers (name, production_run_id, status)
     SELECT 'BENCH-' || n, 1 + n % 10, (ARRAY['IN_TRANSIT','DELIVERED'])[1 + n % 2] FROM generate_series(1, $1) n`,
    [TRACKERS],
  );
  await db.query(`
    INSERT INTO tracker_status_history (tracker_id, status, timestamp)
    SELECT t.id, e.status, now() - e.age
      FROM trackers t
     CROSS JOIN LATERAL (VALUES ('CREATED', interval '9 days'), ('IN_TRANSIT', interval '8 days'),
                               (t.status, interval '1 day')) AS e(status, age)
     ORDER BY e.age DESC, t.id`);
  // Report g: tracker g % T, the (g / T)-th report of that tracker, 10 minutes apart ending now;
  // confidence g % 5 (0 and 1 ineligible) and positions spread so a share falls inside the box.
  const start = Date.now() - (REPORTS_PER_TRACKER * 10 + 5) * 60_000;
  for (let lo = 0; lo < REPORTS; lo += CHUNK) {
    const hi = Math.min(REPORTS, lo + CHUNK);
    await db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, eligible, received_at)
       SELECT tracker_id, ts, lat, lon, conf, 5, 'bench',
              conf >= 2 AND NOT (lon BETWEEN 73.6 AND 134.8 AND lat BETWEEN 18.2 AND 53.5), ts + interval '3 seconds'
         FROM (SELECT 1 + (g % $3) AS tracker_id,
                      to_timestamp($4 / 1000.0) + (g / $3) * interval '10 minutes' + (g % $3) * interval '1 millisecond' AS ts,
                      -60 + ((g * 37) % 12000) / 100.0 AS lat,
                      -180 + ((g * 101) % 36000) / 100.0 AS lon,
                      (g % 5)::int AS conf
                 FROM generate_series($1::bigint, $2::bigint - 1) g) r`,
      [lo, hi, TRACKERS, start],
    );
    log(`  ${hi} reports`);
  }
  await db.query(`SET work_mem = '512MB'`);
  for (const [table, unit] of [
    ['location_history_hourly', 'hour'],
    ['location_history_daily', 'day'],
  ]) {
    await db.query(
      `INSERT INTO ${table} (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       SELECT DISTINCT ON (tracker_id, date_trunc('${unit}', timestamp, 'UTC'))
              tracker_id, date_trunc('${unit}', timestamp, 'UTC'), id, timestamp, latitude, longitude, confidence
         FROM location_reports WHERE eligible
        ORDER BY tracker_id, date_trunc('${unit}', timestamp, 'UTC'), timestamp DESC, id DESC`,
    );
    log(`  ${table} built`);
  }
  await db.query('VACUUM ANALYZE');
  log('generated and analyzed');
}

interface HealthBody {
  status: string;
  response_time_ms: number;
  test_steps?: Record<string, { details: { duration_ms?: number } }>;
}

async function measure(path: string, token: string, n: number) {
  const call = async () => {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${PORT}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    const body = (await res.json()) as HealthBody;
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(body)}`);
    return {
      ms: performance.now() - started,
      server: body.response_time_ms,
      status: body.status,
      steps: body.test_steps,
    };
  };
  for (let i = 0; i < Math.min(20, n); i++) await call(); // warm-up (JIT, pool, buffers)
  const runs: Awaited<ReturnType<typeof call>>[] = [];
  for (let i = 0; i < n; i++) runs.push(await call());
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
  const server = runs.map((r) => r.server).sort((a, b) => a - b);
  const at = (values: number[], p: number) => Math.round(percentile(values, p) * 100) / 100;
  const stepKeys = Object.keys(runs[0].steps ?? {});
  const step_p50 = Object.fromEntries(
    stepKeys.map((key) => [
      key,
      at(
        runs.map((r) => r.steps?.[key]?.details.duration_ms ?? 0).sort((a, b) => a - b),
        50,
      ),
    ]),
  );
  return {
    p50: at(sorted, 50),
    p95: at(sorted, 95),
    p99: at(sorted, 99),
    server_p50: at(server, 50),
    statuses: [...new Set(runs.map((r) => r.status))],
    ...(stepKeys.length > 0 ? { step_p50 } : {}),
  };
}

async function main(): Promise<void> {
  const pgVersion = await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, false);

  const child = spawnBenchService(DB_NAME, PORT, 'warn');
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT); // the service runs the migrations on start
    await db.connect();
    const [{ count }] = (await db.query<{ count: string }>('SELECT count(*) FROM location_reports')).rows;
    if (Number(count) !== REPORTS) await generate(db);
    else log(`reusing ${count} reports in ${DB_NAME}`);
    const token = await benchAdminToken(db, BENCH_SECRET);
    const sizes = (
      await db.query(`SELECT (SELECT count(*) FROM location_history_hourly)::int AS hourly, (SELECT count(*) FROM location_history_daily)::int AS daily,
                             pg_size_pretty(pg_database_size(current_database())) AS database_size`)
    ).rows[0];
    const basic = await measure('/api/v1/health/basic', token, BASIC_N);
    const pipeline = await measure('/api/v1/health/pipeline', token, PIPELINE_N);
    console.log(
      JSON.stringify(
        {
          machine: machineInfo(pgVersion),
          data: { reports: REPORTS, trackers: TRACKERS, ...sizes },
          settings: {
            basic_requests: BASIC_N,
            pipeline_requests: PIPELINE_N,
            redis: Boolean(process.env.REDIS_URL),
            sequential: true,
          },
          load_average_at_start: loadavg().map((v) => Math.round(v * 100) / 100),
          basic_ms: basic,
          pipeline_ms: pipeline,
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
