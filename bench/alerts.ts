/**
 * Standalone benchmark of alerts, against the compiled service and a real PostgreSQL:
 * 1. check — a fleet of BENCH_ALERT_TRACKERS (100 000) trackers over 10 clients (40 % in transit
 *    with a destination, 10 % in storage, 40 % delivered within 180 days, 10 % created), each with
 *    its status entries and its newest report kept as ingest keeps it; the service runs the check
 *    every 2 s, and the figures are the first check (which opens the fleet's alerts with their
 *    events and notifications) and the steady checks after it (alert_check_duration_seconds);
 * 2. ingest — BENCH_INGEST_REPORTS (200 000) reports of in-transit trackers in batches of 1 000
 *    (4 at a time), with ALERTS_ENABLED=false and =true on the same database, alternating, three
 *    rounds each: reports/s. The first round with alerts on also resolves the alerts the check
 *    opened (with their events); the later ones are the steady cost.
 *
 *   npx nest build && node dist/bench/alerts.js
 *
 * Env: BENCH_PG_URL, BENCH_PORT (default 3923), BENCH_ALERT_TRACKERS, BENCH_INGEST_REPORTS.
 * Creates and drops its own database `tps_bench_alerts`.
 */
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchDatabaseUrl,
  dropDatabase,
  log,
  prepareDatabase,
  runScript,
  signJwt,
  spawnService,
  stopService,
  waitForServer,
} from './standalone.js';

const PORT = Number(process.env.BENCH_PORT ?? 3923);
const TRACKERS = Number(process.env.BENCH_ALERT_TRACKERS ?? 100_000);
const INGEST_REPORTS = Number(process.env.BENCH_INGEST_REPORTS ?? 200_000);
const DB_NAME = 'tps_bench_alerts';
const METRICS_TOKEN = 'bench-metrics-token';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function start(env: Record<string, string>) {
  return spawnService({
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: 'warn',
    env: {
      REDIS_URL: process.env.REDIS_URL ?? '',
      ADMIN_PASSWORD: 'bench-password-123',
      GEOFENCE_ENABLED: 'false',
      METRICS_TOKEN,
      ...env,
    },
  });
}

/**
 * The fleet, written set-based. Tracker n: client (n / 10) % 10, destination n % 20; kind by n % 10 —
 * 0..3 in transit (started 1..300 h ago), 4 in storage, 5..8 delivered (journeys of 20..260 h,
 * delivered within 150 days), 9 created. Reports: the in-transit and in-storage trackers reported
 * 0..48 h ago (a quarter of them are silent), a tenth of them with a battery of 5..95 %.
 */
async function fleet(db: pg.Client): Promise<{ ingest: number; inTransit: number[] }> {
  await db.query(`
    INSERT INTO clients (name) SELECT 'client-' || c FROM generate_series(0, 9) c;
    INSERT INTO brands (name, client_id) SELECT 'brand-' || id, id FROM clients;
    INSERT INTO production_runs (description, brand_id) SELECT 'run-' || id, id FROM brands;
    INSERT INTO delivery_locations (name) SELECT 'dest-' || d FROM generate_series(0, 19) d;
    INSERT INTO users (name, email, password_hash, roles) VALUES ('admin', 'admin@bench', 'x', '{admin}');
    INSERT INTO users (name, email, password_hash, roles) VALUES ('ingest', 'ingest@bench', 'x', '{ingest}');`);
  await db.query(`
    CREATE TEMP TABLE plan AS
    SELECT n, (SELECT id FROM production_runs ORDER BY id OFFSET (n / 10) % 10 LIMIT 1) AS run,
           (SELECT id FROM delivery_locations ORDER BY id OFFSET n % 20 LIMIT 1) AS dest,
           CASE WHEN n % 10 < 4 THEN 'IN_TRANSIT' WHEN n % 10 = 4 THEN 'IN_STORAGE'
                WHEN n % 10 < 9 THEN 'DELIVERED' ELSE 'CREATED' END AS status,
           now() - make_interval(hours => 1 + ((n::bigint * 7919) % 300)::int) AS started,
           make_interval(hours => 20 + ((n::bigint * 104729) % 240)::int) AS took,
           now() - make_interval(hours => ((n::bigint * 31) % 3600)::int) AS delivered
      FROM generate_series(1, ${TRACKERS}) n;
    ALTER TABLE plan ADD COLUMN transit_at timestamptz;
    UPDATE plan SET transit_at = CASE WHEN status = 'DELIVERED' THEN delivered - took ELSE started END;`);
  await db.query(`
    BEGIN;
    SET LOCAL tracker_pipeline.status_events = 'off';
    INSERT INTO trackers (name, production_run_id, status, delivery_location_id, created_at)
    SELECT 'A-' || n, run, status, CASE WHEN status <> 'CREATED' THEN dest END, transit_at - interval '1 hour' FROM plan;
    CREATE TEMP TABLE ids AS SELECT t.id, p.* FROM plan p JOIN trackers t ON t.name = 'A-' || p.n;
    INSERT INTO tracker_status_history (tracker_id, status, timestamp, source)
    SELECT id, 'CREATED', transit_at - interval '1 hour', 'import' FROM ids
    UNION ALL SELECT id, 'IN_TRANSIT', transit_at, 'import' FROM ids WHERE status <> 'CREATED'
    UNION ALL SELECT id, 'DELIVERED', delivered, 'import' FROM ids WHERE status = 'DELIVERED';
    UPDATE tracker_status_history h SET delivery_location_id = i.dest FROM ids i
     WHERE h.tracker_id = i.id AND h.status = 'DELIVERED';
    INSERT INTO tracker_report_activity (tracker_id, last_report_at, battery, battery_at)
    SELECT id, now() - make_interval(mins => ((n::bigint * 13) % 2880)::int),
           CASE WHEN n % 10 = 0 THEN 5 + n % 91 END, CASE WHEN n % 10 = 0 THEN now() - make_interval(mins => ((n::bigint * 13) % 2880)::int) END
      FROM ids WHERE status IN ('IN_TRANSIT', 'IN_STORAGE');
    COMMIT;`);
  await db.query('VACUUM ANALYZE');
  const ingest = (await db.query<{ id: number }>(`SELECT id FROM users WHERE email = 'ingest@bench'`)).rows[0].id;
  const inTransit = (
    await db.query<{ id: number }>(`SELECT id FROM trackers WHERE status = 'IN_TRANSIT' ORDER BY id`)
  ).rows.map((r) => r.id);
  return { ingest, inTransit };
}

/** alert_check_duration_seconds as the service's /metrics answers it: runs, and the seconds they took. */
async function checkMetric(): Promise<{ count: number; sum: number }> {
  const text = await (
    await fetch(`http://127.0.0.1:${PORT}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  const value = (name: string) =>
    Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(name)) ?? '')?.[2] ?? 0);
  return { count: value('alert_check_duration_seconds_count'), sum: value('alert_check_duration_seconds_sum') };
}

async function checks(db: pg.Client) {
  const child = start({ ALERT_CHECK_SECONDS: '2' });
  try {
    await waitForServer(child, PORT, { attempts: 600 });
    let m = await checkMetric();
    while (m.count < 1) {
      await sleep(200);
      m = await checkMetric();
    }
    const first = m.sum;
    const opened = await db.query<{ kind: string; n: number }>(
      `SELECT kind, count(*)::int AS n FROM alerts GROUP BY kind ORDER BY kind`,
    );
    while (m.count < 6) {
      await sleep(500);
      m = await checkMetric();
    }
    return {
      trackers: TRACKERS,
      first_check_seconds: +first.toFixed(3),
      opened: Object.fromEntries(opened.rows.map((r) => [r.kind, r.n])),
      steady_check_seconds_mean: +((m.sum - first) / (m.count - 1)).toFixed(3),
      steady_checks: m.count - 1,
    };
  } finally {
    await stopService(child);
  }
}

/** One ingest round: `reports` new reports (1 h apart per tracker, after everything stored) in batches of 1 000. */
async function ingestRound(alerts: boolean, token: string, trackers: number[], round: number) {
  const child = start({ ALERTS_ENABLED: String(alerts), ALERT_CHECK_SECONDS: '86400' });
  try {
    await waitForServer(child, PORT, { attempts: 600 });
    const base = Date.now() - 2 * 86_400_000 + round * 3_600_000;
    const bodies: string[] = [];
    for (let from = 0; from < INGEST_REPORTS; from += 1000)
      bodies.push(
        JSON.stringify({
          reports: Array.from({ length: Math.min(1000, INGEST_REPORTS - from) }, (_, i) => {
            const k = from + i;
            return {
              tracker_id: trackers[k % trackers.length],
              timestamp: new Date(base + Math.floor(k / trackers.length) * 1000 + (k % 997)).toISOString(),
              latitude: 48 + (k % 1000) / 1e4,
              longitude: 9 + round / 1e3,
              confidence: 3,
              battery: k % 3 === 0 ? 50 : undefined,
            };
          }),
        }),
      );
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let body = bodies.shift(); body !== undefined; body = bodies.shift()) {
          const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/locations/reports`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body,
          });
          if (res.status !== 200) throw new Error(`ingest answered ${res.status}`);
          await res.arrayBuffer();
        }
      }),
    );
    return Math.round(INGEST_REPORTS / ((performance.now() - started) / 1000));
  } finally {
    await stopService(child);
  }
}

async function main(): Promise<void> {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  // The first start migrates the database; the fleet is written after.
  const migrate = start({ ALERTS_ENABLED: 'false' });
  await waitForServer(migrate, PORT, { attempts: 600 });
  await stopService(migrate);
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  await db.connect();
  try {
    log(`writing a fleet of ${TRACKERS} trackers`);
    const w = await fleet(db);
    log('alert checks');
    const check = await checks(db);
    log('ingest, alerts off and on');
    const token = signJwt(w.ingest, BENCH_SECRET);
    const off: number[] = [];
    const on: number[] = [];
    for (let round = 0; round < 6; round++) {
      const alerts = round % 2 === 1;
      (alerts ? on : off).push(await ingestRound(alerts, token, w.inTransit, round));
      log(`round ${round}: alerts ${alerts ? 'on' : 'off'} ${(alerts ? on : off).at(-1)} reports/s`);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, load: readFileSync('/proc/loadavg', 'utf8').trim() },
          check,
          ingest: {
            reports: INGEST_REPORTS,
            batch: 1000,
            concurrency: 4,
            off_reports_per_second: off,
            on_reports_per_second: on,
            // The first round with alerts on resolves the silent and battery alerts the check opened.
            on_resolving_over_off: +(on[0] / mean(off)).toFixed(3),
            on_steady_over_off: +(mean(on.slice(1)) / mean(off)).toFixed(3),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await db.end().catch(() => undefined);
    if (process.env.BENCH_KEEP_DATABASE !== 'true') await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

runScript(main);
