/**
 * Standalone benchmark of geofence automation, over HTTP against the compiled service and a real
 * PostgreSQL: sustained ingest with 1 000 geofenced locations spread over Europe, with
 * GEOFENCE_ENABLED=false and true in alternating rounds (each on a fresh database), both batch
 * sizes; reports throughput, the ratio on/off, and the processing lag (age of the oldest waiting
 * replay mark — dated right before the batch commits —, sampled every 100 ms while ingest runs,
 * and the time to drain the queue after it), beside the requests' own latency.
 *
 *   npx nest build && node dist/bench/geofences.js
 *
 * Env: BENCH_PG_URL, BENCH_SECONDS (per scenario, default 20), BENCH_CONCURRENCY (default 4),
 * BENCH_PORT (default 3918), BENCH_BATCHES (default 1000,10000), BENCH_MOVEMENT (default
 * routes,jumps; see Movement), BENCH_ROUNDS (default 3: rounds of off and on, alternating which
 * goes first; the ratio is their median, printed with its range), BENCH_ONLY=on|off (one mode, no
 * ratio), BENCH_KEEP=1 (keep the database, to EXPLAIN the worker's statements on it),
 * BENCH_PROFILE=1 (where the database time goes: sampled pg_stat_activity per statement kind and
 * wait event). It creates and drops its own database `tps_bench_geofences_<pid>`.
 */
import { cpus } from 'node:os';
import pg from 'pg';
import { makeBodies, type Movement, type Place, type Route } from './geofence-movement.js';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchDatabaseUrl,
  dropDatabase,
  percentile,
  prepareDatabase,
  processCpuMs,
  runScript,
  signJwt,
  spawnService,
  stopService,
  waitForServer,
} from './standalone.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const PORT = Number(process.env.BENCH_PORT ?? 3918);
// Per process: other runs of this script on the same server (another checkout) must not drop it.
const DB_NAME = `tps_bench_geofences_${process.pid}`;
const TRACKERS = 1000;
/** BENCH_BATCHES=10000 (comma-separated): only these batch sizes. */
const BATCH_SIZES = (process.env.BENCH_BATCHES ?? '1000,10000').split(',').map(Number);
const LOCATIONS = 1000;
/** Rounds of (off, on) per movement (BENCH_ROUNDS, default 3); the ratio reported is their median. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** BENCH_MOVEMENT (comma-separated; see Movement in geofence-movement.ts). */
const MOVEMENTS = (process.env.BENCH_MOVEMENT ?? 'routes,jumps').split(',') as Movement[];

/**
 * BENCH_PROFILE=1: samples pg_stat_activity of the bench database every 20 ms on its own connection
 * and counts, per statement kind (its first words) and wait event, how often a backend was seen
 * active: where the database time goes while ingest runs.
 */
const PROFILE = process.env.BENCH_PROFILE === '1';

function startProfiler(): { stop: () => Promise<Record<string, number>> } {
  const counts = new Map<string, number>();
  const client = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ q: string; w: string | null }>(
        `SELECT regexp_replace(left(regexp_replace(query, '\\s+', ' ', 'g'), 70), '\\$[0-9]+', '?', 'g') AS q, wait_event_type || ':' || wait_event AS w
           FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [DB_NAME],
      );
      for (const r of rows) counts.set(`${r.w ?? 'CPU'} | ${r.q}`, (counts.get(`${r.w ?? 'CPU'} | ${r.q}`) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.end();
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, 25));
    },
  };
}

async function ingest(db: pg.Client, token: string, batchSize: number, bodies: string[], servicePid?: number) {
  const deadline = Date.now() + SECONDS * 1000;
  const profiler = PROFILE ? startProfiler() : null;
  const cpuBefore = servicePid ? processCpuMs(servicePid) : 0;
  // The database's CPU for this service: its backends (a pooled backend that starts later is missed).
  const backends = async () =>
    (
      await db.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [DB_NAME],
      )
    ).rows.map((r) => r.pid);
  const dbPids = await backends();
  const dbCpuBefore = dbPids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  let next = 0;
  let reports = 0;
  const lags: number[] = [];
  const latencies: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await db.query<{ lag: number }>(
        `SELECT coalesce(extract(epoch FROM now() - min(marked_at)), 0)::float8 AS lag FROM geofence_pending`,
      );
      lags.push(rows[0].lag);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const started = performance.now();
  const worker = async () => {
    while (Date.now() < deadline && next < bodies.length) {
      const sent = performance.now();
      const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/locations/reports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: bodies[next++],
      });
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}`);
      await res.arrayBuffer();
      latencies.push(performance.now() - sent);
      reports += batchSize;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  const serviceCpu = servicePid ? (processCpuMs(servicePid) - cpuBefore) / 1000 / seconds : 0;
  const dbCpu = (dbPids.reduce((sum, pid) => sum + processCpuMs(pid), 0) - dbCpuBefore) / 1000 / seconds;
  const drainStarted = performance.now();
  for (;;) {
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM geofence_pending');
    if (rows[0].n === 0 || performance.now() - drainStarted > 120_000) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  sampling = false;
  await sampler;
  // Everything this scenario cost, the worker's drain included: µs of CPU per report (backends that
  // started during the scenario count whole).
  const serviceUs = servicePid ? (processCpuMs(servicePid) - cpuBefore) * 1000 : 0;
  const dbUs = ((await backends()).reduce((sum, pid) => sum + processCpuMs(pid), 0) - dbCpuBefore) * 1000;
  const profile = profiler ? await profiler.stop() : undefined;
  lags.sort((a, b) => a - b);
  latencies.sort((a, b) => a - b);
  return {
    batch_size: batchSize,
    reports,
    seconds: +seconds.toFixed(2),
    reports_per_second: Math.round(reports / seconds),
    request_ms_p50: Math.round(percentile(latencies, 50)),
    request_ms_p99: Math.round(percentile(latencies, 99)),
    lag_seconds_p50: +percentile(lags, 50).toFixed(2),
    lag_seconds_p99: +percentile(lags, 99).toFixed(2),
    drain_seconds_after_ingest: +((performance.now() - drainStarted) / 1000).toFixed(2),
    service_cpu_cores: +serviceCpu.toFixed(2),
    database_cpu_cores: +dbCpu.toFixed(2),
    service_cpu_us_per_report: +(serviceUs / reports).toFixed(1),
    database_cpu_us_per_report: +(dbUs / reports).toFixed(1),
    ...(profile ? { profile } : {}),
  };
}

async function runMode(enabled: boolean, movement: Movement) {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const child = spawnService({
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
    env: {
      REDIS_URL: process.env.REDIS_URL ?? '',
      ADMIN_PASSWORD: 'bench-password-123',
      GEOFENCE_ENABLED: String(enabled),
    },
  });
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const { rows } = await db.query<{ ingest_id: number }>(`
      WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
           b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id),
           r AS (INSERT INTO production_runs (description, brand_id) SELECT 'bench', id FROM b RETURNING id),
           t AS (INSERT INTO trackers (name, production_run_id, created_at) SELECT 'G-' || n, r.id, now() - interval '500 days' FROM r, generate_series(1, ${TRACKERS}) n RETURNING id, created_at),
           h AS (INSERT INTO tracker_status_history (tracker_id, status, timestamp) SELECT id, 'CREATED', created_at FROM t RETURNING 1),
           i AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('ingest', 'ingest@bench', 'x', '{ingest}') RETURNING id)
      SELECT (SELECT id FROM i) AS ingest_id, (SELECT count(*) FROM h) AS entries`);
    // Half storage, half delivery, over Europe, radii 100 m..2 km.
    for (const table of ['storage_locations', 'delivery_locations']) {
      await db.query(
        `INSERT INTO ${table} (name, latitude, longitude, radius_m, dwell_minutes)
         SELECT 'L' || n, 36 + random() * 24, -10 + random() * 40, 100 + (random() * 1900)::int, CASE WHEN n % 3 = 0 THEN NULL ELSE (n % 4) * 10 END
           FROM generate_series(1, ${LOCATIONS / 2}) n`,
      );
    }
    const places = (
      await db.query<Place>(
        'SELECT latitude, longitude, radius_m FROM storage_locations UNION ALL SELECT latitude, longitude, radius_m FROM delivery_locations ORDER BY 1, 2',
      )
    ).rows;
    const trackerIds = (await db.query<{ id: number }>('SELECT id FROM trackers ORDER BY id')).rows.map((r) => r.id);
    const token = signJwt(rows[0].ingest_id, BENCH_SECRET);
    const seq = { next: 0, routes: new Map<number, Route>() };
    await ingest(db, token, 1000, makeBodies(movement, 1000, 10, trackerIds, places, seq), child.pid); // warm-up
    const results = [];
    for (const batchSize of BATCH_SIZES) {
      // Enough bodies for 150 000 reports/s, so ingest never runs out of work before the deadline.
      const bodies = makeBodies(
        movement,
        batchSize,
        Math.ceil((150_000 * SECONDS) / batchSize),
        trackerIds,
        places,
        seq,
      );
      results.push(await ingest(db, token, batchSize, bodies, child.pid));
    }
    const counts = await db.query(`SELECT (SELECT count(*) FROM geofence_visits)::int AS visits,
      (SELECT count(*) FROM tracker_status_history WHERE source = 'geofence')::int AS automatic_entries`);
    return { geofence_enabled: enabled, movement, ingest: results, after: counts.rows[0] };
  } finally {
    await stopService(child);
    await db.end().catch(() => undefined);
    if (process.env.BENCH_KEEP === '1') console.error(`kept database ${DB_NAME}`);
    else await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'on' || process.env.BENCH_ONLY === 'off') {
    // Profiling one mode alone (no ratio).
    for (const movement of MOVEMENTS)
      console.log(JSON.stringify(await runMode(process.env.BENCH_ONLY === 'on', movement), null, 2));
    return;
  }
  const machine = { cpus: cpus().length, load: (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim() };
  const runs = [];
  for (const movement of MOVEMENTS) {
    // Rounds alternate which mode goes first, so a drift of the host's speed during the run
    // weighs on both modes alike; each round's ratio compares two neighbouring scenarios.
    type Mode = Awaited<ReturnType<typeof runMode>>;
    const rounds: { order: string; off: Mode; on: Mode; ratio: { batch_size: number; on_over_off: number }[] }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const offFirst = round % 2 === 0;
      const first = await runMode(!offFirst, movement);
      const second = await runMode(offFirst, movement);
      const [off, on] = offFirst ? [first, second] : [second, first];
      const ratio = on.ingest.map((r, i) => ({
        batch_size: r.batch_size,
        on_over_off: +(r.reports_per_second / off.ingest[i].reports_per_second).toFixed(3),
      }));
      rounds.push({ order: offFirst ? 'off, on' : 'on, off', off, on, ratio });
    }
    const summary = BATCH_SIZES.map((batchSize, i) => {
      const ratios = rounds.map((r) => r.ratio[i].on_over_off).sort((a, b) => a - b);
      const lags = rounds.map((r) => r.on.ingest[i].lag_seconds_p99).sort((a, b) => a - b);
      return {
        batch_size: batchSize,
        on_over_off: { median: median(ratios), min: ratios[0], max: ratios.at(-1)! },
        lag_seconds_p99: { median: median(lags), max: lags.at(-1)! },
      };
    });
    runs.push({ movement, rounds, summary });
  }
  console.log(JSON.stringify({ machine, seconds: SECONDS, concurrency: CONCURRENCY, rounds: ROUNDS, runs }, null, 2));
  for (const r of runs) {
    for (const x of r.summary) {
      const each = r.rounds.map((round) => {
        const i = round.ratio.findIndex((y) => y.batch_size === x.batch_size);
        return `${round.ratio[i].on_over_off} (${round.on.ingest[i].reports_per_second}/${round.off.ingest[i].reports_per_second}, lag p99 ${round.on.ingest[i].lag_seconds_p99} s)`;
      });
      console.error(
        `${r.movement} batch ${x.batch_size}: on/off median ${x.on_over_off.median} [${x.on_over_off.min}..${x.on_over_off.max}], lag p99 median ${x.lag_seconds_p99.median} s, max ${x.lag_seconds_p99.max} s; rounds: ${each.join('; ')}`,
      );
    }
  }
}

const median = (sorted: number[]) =>
  sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]
    : +((sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2).toFixed(3);

runScript(main);
