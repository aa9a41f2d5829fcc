import cliProgress from 'cli-progress';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/common/config/app-config.js';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source-options.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/infrastructure/database/embedded-postgres.js';
import { withClient, withDatabase } from '../standalone.js';
import type { Scale, ScaleSizes } from './options.js';

/** Ids the scenarios need, stored in the bench database so a kept database can be reused. */
export interface BenchData {
  sizes: ScaleSizes;
  adminUserId: number;
  analyticsRunId: number;
  csvRunId: number;
  importRunId: number;
  historyTrackerId: number;
  /** Trackers the ingest scenario reports for (ids are contiguous). */
  firstTrackerId: number;
  trackerCount: number;
  rawReports: number;
}

export interface BenchDatabase {
  name: string;
  url: string;
  data: BenchData;
  embedded: EmbeddedDatabase | null;
  /** Seconds spent generating (0 when an existing database was reused). */
  generatedSeconds: number;
}

const EMBEDDED_BENCH_PORT = 54339;

/**
 * The PostgreSQL server to use: BENCH_PG_URL, else the server of DATABASE_URL, else an embedded
 * server under ./data/bench-postgres (never the service's own database).
 */
async function serverUrl(log: (m: string) => void): Promise<{ adminUrl: string; embedded: EmbeddedDatabase | null }> {
  const configured = process.env.BENCH_PG_URL ?? process.env.DATABASE_URL;
  if (configured) return { adminUrl: withDatabase(configured, 'postgres'), embedded: null };
  log(`no BENCH_PG_URL/DATABASE_URL: starting embedded PostgreSQL on 127.0.0.1:${EMBEDDED_BENCH_PORT}`);
  const embedded = await startEmbeddedPostgres({
    dataDir: 'data',
    name: 'bench-postgres',
    port: EMBEDDED_BENCH_PORT,
    runtimeDir: process.env.EMBEDDED_PG_RUNTIME_DIR,
    log,
  });
  return { adminUrl: embedded.url, embedded };
}

/** Reuses `tps_bench_<scale>` when it was generated with the same sizes, else (re)creates it. */
export async function prepareBenchDatabase(
  scale: Scale,
  sizes: ScaleSizes,
  fresh: boolean,
  log: (m: string) => void,
): Promise<BenchDatabase> {
  const { adminUrl, embedded } = await serverUrl(log);
  // BENCH_DB: another name, so a branch's schema does not touch a bench database others reuse.
  const name = process.env.BENCH_DB ?? `tps_bench_${scale}`;
  const url = withDatabase(adminUrl, name);
  const exists = await withClient(
    adminUrl,
    async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );
  if (exists && !fresh) {
    const kept = await withClient(url, async (c) => {
      const rows = await c
        .query<{ value: BenchData }>(`SELECT value FROM bench_meta WHERE key = 'data'`)
        .catch(() => ({ rows: [] }));
      return rows.rows[0]?.value ?? null;
    });
    if (kept && dataShape(kept.sizes) === dataShape(sizes)) {
      log(`reusing database ${name} (--fresh rebuilds it); applying pending migrations`);
      await migrate(url);
      // Earlier runs' imports are removed after measuring; this clears one that was interrupted.
      await withClient(url, async (c) => {
        await c.query('DELETE FROM trackers WHERE production_run_id = $1', [kept.importRunId]);
        await settleGeofences(c);
        // Earlier runs leave dead rows (imports, ingest batches): measure a vacuumed database, not
        // whatever autovacuum happened to reach.
        await c.query('VACUUM ANALYZE');
        // Flush what the vacuum dirtied now, untimed, instead of during the first scenarios.
        await c.query('CHECKPOINT').catch(() => undefined);
      });
      return { name, url, data: kept, embedded, generatedSeconds: 0 };
    }
  }
  const started = performance.now();
  await withClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${name}`);
  });
  log(`created database ${name}; running the app's migrations`);
  await migrate(url);
  const data = await withClient(url, async (c) => {
    const generated = await generate(c, sizes, log);
    await settleGeofences(c);
    return generated;
  });
  const generatedSeconds = (performance.now() - started) / 1000;
  log(`generated in ${generatedSeconds.toFixed(1)} s`);
  return { name, url, data, embedded, generatedSeconds };
}

async function migrate(url: string): Promise<void> {
  const ds = new DataSource(dataSourceOptions(loadConfig({ NODE_ENV: 'development' }), url));
  await ds.initialize();
  try {
    await ds.runMigrations({ transaction: 'each' });
  } finally {
    await ds.destroy();
  }
}

/** The sizes that decide the data set (durations and the import file do not). */
function dataShape(s: ScaleSizes): string {
  return JSON.stringify([
    s.trackers,
    s.analyticsRunTrackers,
    s.csvRunTrackers,
    s.reports,
    s.historyHours,
    ...(s.reportDays ? [s.reportDays] : []),
  ]);
}

const REPORT_CHUNK = 500_000;

/**
 * Loads the data set with set-based SQL only (INSERT … SELECT generate_series): clients → brands →
 * runs → trackers → status histories → raw reports → hourly/daily aggregates built from raw by the
 * contract's rule (eligible report with the greatest (timestamp, id) per bucket).
 */
async function generate(c: pg.Client, sizes: ScaleSizes, log: (m: string) => void): Promise<BenchData> {
  const q = async <T extends pg.QueryResultRow = Record<string, number>>(sql: string, params: unknown[] = []) =>
    (await c.query<T>(sql, params)).rows;
  await q('SET synchronous_commit = off');
  await q(`SET maintenance_work_mem = '256MB'`);
  await q(`SET work_mem = '64MB'`);
  await q('CREATE TABLE bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)');

  log('reference data');
  await q(`INSERT INTO clients (name) SELECT 'Bench client ' || n FROM generate_series(1, 3) n`);
  await q(
    `INSERT INTO brands (name, client_id) SELECT 'Brand ' || n, c.id FROM clients c CROSS JOIN generate_series(1, 2) n`,
  );
  await q(
    `INSERT INTO storage_locations (name, latitude, longitude) SELECT 'Bench storage ' || n, 50 + n, 5 + n FROM generate_series(1, 5) n`,
  );
  await q(
    `INSERT INTO delivery_locations (name, latitude, longitude) SELECT 'Bench delivery ' || n, 40 + n, -3 + n FROM generate_series(1, 5) n`,
  );
  const run = async (description: string) =>
    (
      await q<{ id: number }>(
        `INSERT INTO production_runs (description, brand_id, start_date) VALUES ($1, (SELECT min(id) FROM brands), now() - interval '60 days') RETURNING id`,
        [description],
      )
    )[0].id;
  const analyticsRunId = await run(`Analytics run (${sizes.analyticsRunTrackers} trackers)`);
  const csvRunId = await run(`CSV run (${sizes.csvRunTrackers} trackers)`);
  const importRunId = await run('Import target');
  const historyRunId = await run('History run');
  const others = Math.max(0, sizes.trackers - sizes.analyticsRunTrackers - sizes.csvRunTrackers);
  const otherRuns = Math.max(1, Math.ceil(others / 1000));
  await q(
    `INSERT INTO production_runs (description, brand_id, start_date)
     SELECT 'Run ' || n, (SELECT array_agg(id ORDER BY id) FROM brands)[1 + n % 6], now() - interval '90 days' FROM generate_series(1, $1::int) n`,
    [otherRuns],
  );

  log(`trackers: ${sizes.trackers.toLocaleString('en')} with status histories`);
  // Tracker n's state is n % 4 (CREATED, IN_TRANSIT, IN_STORAGE, DELIVERED); its history walks there.
  await q(
    `WITH runs AS (SELECT array_agg(id ORDER BY id) AS ids FROM production_runs WHERE description LIKE 'Run %'),
          plan AS (
            SELECT n, CASE WHEN n <= $1 THEN $3::int WHEN n <= $1 + $2 THEN $4::int ELSE runs.ids[1 + n % array_length(runs.ids, 1)] END AS run_id
            FROM generate_series(1, $5::int) n, runs)
     INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, created_at, updated_at)
     SELECT 'BT-' || lpad(n::text, 7, '0'), run_id, (ARRAY['CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED'])[1 + n % 4],
            CASE WHEN n % 4 = 2 THEN 1 + n % 5 END, 1 + n % 5, now() - interval '40 days', now() - interval '40 days'
     FROM plan ORDER BY n`,
    [sizes.csvRunTrackers, sizes.analyticsRunTrackers, csvRunId, analyticsRunId, sizes.trackers],
  );
  const [{ first, count }] = await q<{ first: number; count: number }>(
    'SELECT min(id) AS first, count(*)::int AS count FROM trackers',
  );
  await q(
    `INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id)
     SELECT t.id, (ARRAY['CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED'])[1 + s],
            t.created_at + s * interval '3 days' + (t.id % 48) * interval '1 hour',
            CASE WHEN s = 2 THEN 1 + t.id % 5 END, CASE WHEN s = 3 THEN t.delivery_location_id END
     FROM trackers t CROSS JOIN LATERAL generate_series(0, (t.id - $1) % 4) s`,
    [first - 1],
  );
  const [{ id: historyTrackerId }] = await q<{ id: number }>(
    `INSERT INTO trackers (name, production_run_id, status) VALUES ('History tracker', $1, 'IN_TRANSIT') RETURNING id`,
    [historyRunId],
  );
  await q(
    `INSERT INTO tracker_status_history (tracker_id, status, timestamp) VALUES ($1, 'IN_TRANSIT', now() - interval '2 years')`,
    [historyTrackerId],
  );

  // Raw reports: report g belongs to tracker first + g % count, (g / count) steps back from now; a
  // step is an hour (every tracker-hour holds one report) or, with reportDays, the tracker's share
  // of that span. Every 10th is low confidence, every 10th+1 inside the excluded box; the rest are
  // eligible. Every day they cover gets its daily partition first.
  const perTracker = Math.ceil(sizes.reports / count);
  const stepSeconds = sizes.reportDays ? Math.floor((sizes.reportDays * 86_400) / perTracker) : 3600;
  await q(
    `SELECT location_reports_add_partition(d::date)
       FROM generate_series(((now() - $1::int * interval '1 second') AT TIME ZONE 'UTC')::date::timestamp,
                            (now() AT TIME ZONE 'UTC')::date::timestamp, interval '1 day') d`,
    [perTracker * stepSeconds + 3600],
  );
  const bar = new cliProgress.SingleBar(
    { format: '  raw reports [{bar}] {percentage}% {value}/{total}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(sizes.reports, 0);
  for (let from = 0; from < sizes.reports; from += REPORT_CHUNK) {
    const to = Math.min(sizes.reports, from + REPORT_CHUNK) - 1;
    await q(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, eligible, received_at)
       SELECT $1::int + g % $2::int, ts,
              CASE WHEN g % 10 = 1 THEN 30 ELSE 48 + (g % 1000) / 1000.0 END,
              CASE WHEN g % 10 = 1 THEN 110 ELSE 2 + (g % 997) / 1000.0 END,
              CASE WHEN g % 10 = 0 THEN 1 ELSE 3 END, 10, 'bench', g % 10 > 1, ts
       FROM generate_series($3::bigint, $4::bigint) g,
            LATERAL (SELECT date_trunc('hour', now()) - (g / $2::int) * $5::int * interval '1 second' + (g % 60) * interval '1 minute' AS ts) t`,
      [first, count, from, to, stepSeconds],
    );
    bar.update(to + 1);
  }
  bar.stop();
  log(`history tracker: ${sizes.historyHours.toLocaleString('en')} hourly points`);
  await q(
    `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible, received_at)
     SELECT $1::int, ts, 52 + (h % 100) / 1000.0, 13 + (h % 100) / 1000.0, 3, true, ts
     FROM generate_series(1, $2::int) h, LATERAL (SELECT date_trunc('hour', now()) - h * interval '1 hour' + interval '5 minutes' AS ts) t`,
    [historyTrackerId, sizes.historyHours],
  );

  log('aggregate location_history_hourly');
  await q(
    `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
     SELECT DISTINCT ON (tracker_id, date_trunc('hour', timestamp, 'UTC'))
            tracker_id, date_trunc('hour', timestamp, 'UTC'), id, timestamp, latitude, longitude, confidence
     FROM location_reports WHERE eligible
     ORDER BY tracker_id, date_trunc('hour', timestamp, 'UTC'), timestamp DESC, id DESC`,
  );
  // Daily rows arrive with their hour counts, so the recount trigger finds nothing to rewrite.
  log('aggregate location_history_daily');
  await q(
    `INSERT INTO location_history_daily (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence, hourly_buckets)
     SELECT d.*, coalesce(c.n, 0)
       FROM (SELECT DISTINCT ON (tracker_id, date_trunc('day', timestamp, 'UTC'))
                    tracker_id, date_trunc('day', timestamp, 'UTC') AS bucket, id, timestamp, latitude, longitude, confidence
               FROM location_reports WHERE eligible
              ORDER BY tracker_id, date_trunc('day', timestamp, 'UTC'), timestamp DESC, id DESC) d
       LEFT JOIN (SELECT tracker_id, date_trunc('day', bucket, 'UTC') AS day, count(*)::int AS n
                    FROM location_history_hourly GROUP BY 1, 2) c ON c.tracker_id = d.tracker_id AND c.day = d.bucket
      ORDER BY d.tracker_id, d.bucket`,
  );
  const [{ id: adminUserId }] = await q<{ id: number }>(
    `INSERT INTO users (name, email, password_hash, roles) VALUES ('Bench admin', 'bench-admin@example.com', 'not-a-login', '{admin}') RETURNING id`,
  );
  // Visibility map and statistics, as a long-running database would have them (index-only scans).
  log('VACUUM ANALYZE');
  await q('VACUUM ANALYZE');
  await q('CHECKPOINT').catch(() => undefined);
  const data: BenchData = {
    sizes,
    adminUserId,
    analyticsRunId,
    csvRunId,
    importRunId,
    historyTrackerId,
    firstTrackerId: first,
    trackerCount: count,
    rawReports: sizes.reports + sizes.historyHours,
  };
  await q(`INSERT INTO bench_meta (key, value) VALUES ('data', $1)`, [JSON.stringify(data)]);
  return data;
}

/** Drops the bench tables' temporary leftovers of a run (imported trackers). */
export async function cleanImported(url: string, importRunId: number): Promise<void> {
  await withClient(url, async (c) => {
    await c.query('DELETE FROM trackers WHERE production_run_id = $1', [importRunId]);
    await c.query('VACUUM ANALYZE trackers, tracker_status_history');
  });
}

/**
 * Flushes dirty pages after a write-heavy scenario (untimed), so the next scenario does not pay for
 * the previous one's checkpoint. Needs a superuser; without one it is skipped.
 */
/** The server's current WAL insert position (an LSN). */
export async function walPosition(url: string): Promise<string> {
  return withClient(
    url,
    async (c) => (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn,
  );
}

/** WAL bytes written since `lsn`. */
export async function walBytesSince(url: string, lsn: string): Promise<number> {
  return withClient(url, async (c) =>
    Number(
      (await c.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS bytes', [lsn]))
        .rows[0].bytes,
    ),
  );
}

/**
 * Geofence automation of a bench database as a running service would have it: the generated history
 * counts as replayed (each tracker's progress at its last eligible report; the bench's locations lie
 * far from every generated report, so a replay would open no visit), and whatever queue an earlier
 * run's ingest left is emptied — otherwise a later run's service replays it during every scenario,
 * every tracker from its first report.
 */
async function settleGeofences(c: pg.Client): Promise<void> {
  await c.query('DELETE FROM geofence_pending');
  await c.query(
    `INSERT INTO geofence_progress (tracker_id, last_ts, last_report_id)
     SELECT DISTINCT ON (tracker_id) tracker_id, timestamp, id FROM location_reports WHERE eligible
      ORDER BY tracker_id, timestamp DESC, id DESC
     ON CONFLICT (tracker_id) DO NOTHING`,
  );
}

/**
 * Waits (untimed, at most `maxMs`) until the service's geofence worker has replayed what a write
 * scenario queued, so the next scenario does not share the cores with it; answers the seconds waited
 * and whether the queue emptied.
 */
export async function geofenceQueueDrained(
  url: string,
  maxMs = 180_000,
): Promise<{ seconds: number; drained: boolean }> {
  const started = performance.now();
  return withClient(url, async (c) => {
    for (;;) {
      const { rows } = await c.query<{ empty: boolean }>('SELECT NOT EXISTS (SELECT 1 FROM geofence_pending) AS empty');
      const seconds = (performance.now() - started) / 1000;
      if (rows[0].empty) return { seconds, drained: true };
      if (seconds * 1000 > maxMs) return { seconds, drained: false };
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });
}

/** VACUUM (ANALYZE) of some tables (fixed names from the bench itself). */
export async function vacuum(url: string, tables: string[]): Promise<void> {
  await withClient(url, (c) => c.query(`VACUUM (ANALYZE) ${tables.join(', ')}`));
}

export async function checkpoint(url: string): Promise<void> {
  await withClient(url, (c) => c.query('CHECKPOINT')).catch(() => undefined);
}

export { withClient };
