import type pg from 'pg';
import { checkpoint, geofenceQueueDrained, walBytesSince, walPosition, withClient } from './bench-db.js';
import { ingestOverHttp, prepareBodies } from './ingest.js';
import type { Figure } from './results.js';
import type { BenchContext, Scenario } from './scenarios.js';

const PLAIN = 'location_reports_plain';
const PARTITIONED = 'location_reports_partitioned';
/** The batch size of the retention job before partitions (DELETE … WHERE id IN (… LIMIT n)). */
const DELETE_BATCH = 5000;
/**
 * The DELETE batches stop after this long (BENCH_DELETE_MAX_SECONDS): each batch skips the dead
 * index entries of the ones before it (no vacuum runs in between), so at tens of millions of rows a
 * day's DELETE runs for hours; the figure is then the rate reached and the time it implies for the
 * whole day, a lower bound since the batches only get slower.
 */
const DELETE_MAX_MS = Number(process.env.BENCH_DELETE_MAX_SECONDS ?? 600) * 1000;

/**
 * location_reports as it was before partitioning: one table, primary key id, the same dedup and
 * received_at indexes, filled with a copy of every row (untimed).
 */
async function createPlainCopy(c: pg.Client): Promise<void> {
  await c.query(`DROP TABLE IF EXISTS ${PLAIN}`);
  await c.query(`SET maintenance_work_mem = '256MB'`);
  await c.query(`CREATE TABLE ${PLAIN} (LIKE location_reports INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await c.query(`INSERT INTO ${PLAIN} SELECT * FROM location_reports ORDER BY id`);
  await c.query(`ALTER TABLE ${PLAIN} ADD PRIMARY KEY (id)`);
  await c.query(`CREATE UNIQUE INDEX ${PLAIN}_dedup ON ${PLAIN} (tracker_id, timestamp, latitude, longitude)`);
  await c.query(`CREATE INDEX ${PLAIN}_received ON ${PLAIN} (received_at)`);
  await c.query(`VACUUM ANALYZE ${PLAIN}`);
}

/** Swaps which table the service writes to under the name location_reports (the service is idle). */
async function serve(c: pg.Client, table: 'plain' | 'partitioned'): Promise<void> {
  const [from, to] = table === 'plain' ? [PARTITIONED, PLAIN] : [PLAIN, PARTITIONED];
  await c.query('BEGIN');
  await c.query(`ALTER TABLE location_reports RENAME TO ${from}`);
  await c.query(`ALTER TABLE ${to} RENAME TO location_reports`);
  await c.query('COMMIT');
}

async function timedSql(
  url: string,
  statements: (c: pg.Client) => Promise<number>,
): Promise<{ ms: number; wal: number; rows: number }> {
  const lsn = await walPosition(url);
  const started = performance.now();
  const rows = await withClient(url, statements);
  const ms = performance.now() - started;
  return { ms, wal: await walBytesSince(url, lsn), rows };
}

/**
 * Partitioned vs unpartitioned raw reports in one run, on the same rows:
 * - ingest over HTTP (10 000-report batches, 4 in flight), alternating partitioned / plain twice so
 *   drift of the shared machine hits both alike;
 * - retention of one day: DROP TABLE of a complete day's partition vs the DELETE batches the job
 *   ran before (the same rows, on the plain copy); the day is restored afterwards, untimed.
 */
export const partitionsScenario: Scenario = async (ctx: BenchContext) => {
  const url = ctx.db.url;
  const seconds = ctx.options.sizes.seconds;
  await withClient(url, createPlainCopy);
  await checkpoint(url);
  const ingestUrl = `${ctx.app.base}/api/v1/locations/reports`;
  const rates = { partitioned: [] as number[], plain: [] as number[] };
  const wal = { partitioned: 0, plain: 0 };
  try {
    for (const round of [1, 2]) {
      for (const table of ['partitioned', 'plain'] as const) {
        if (table === 'plain') await withClient(url, (c) => serve(c, 'plain'));
        try {
          const bodies = prepareBodies(ctx.db.data, 10_000, seconds);
          // Untimed warm-up on the table about to be measured (its hot index pages into the cache).
          if (round === 1)
            await ingestOverHttp(ingestUrl, ctx.auth, ctx.db.data, {
              batch: 10_000,
              seconds: 2,
              concurrency: 4,
              bodies: [],
            });
          const lsn = await walPosition(url);
          const r = await ingestOverHttp(ingestUrl, ctx.auth, ctx.db.data, {
            batch: 10_000,
            seconds,
            concurrency: 4,
            bodies,
          });
          wal[table] += (await walBytesSince(url, lsn)) / r.accepted / 2;
          rates[table].push(r.reportsPerSecond);
        } finally {
          if (table === 'plain') await withClient(url, (c) => serve(c, 'partitioned'));
        }
      }
    }
    await checkpoint(url);
    const retention = await oneDayRetention(url);
    const deleteWholeDayMs =
      retention.delete.stopped && retention.delete.rows > 0
        ? (retention.delete.ms * retention.rows) / retention.delete.rows
        : retention.delete.ms;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(rates.partitioned) / mean(rates.plain);
    const figures: Figure[] = [
      {
        label: 'ingest into the partitioned table, HTTP batches of 10,000, 4 in flight',
        value: mean(rates.partitioned),
        unit: 'reports/s',
        note: `rounds ${rates.partitioned.map((r) => r.toFixed(0)).join(' / ')}, ${wal.partitioned.toFixed(0)} B of WAL per report`,
        ratio: { to: 'unpartitioned, same run', value: ratio },
        goal: { text: 'within 10 % of the unpartitioned table', met: ratio >= 0.9 },
      },
      {
        label: 'ingest into one unpartitioned table (as before), same batches',
        value: mean(rates.plain),
        unit: 'reports/s',
        note: `rounds ${rates.plain.map((r) => r.toFixed(0)).join(' / ')}, ${wal.plain.toFixed(0)} B of WAL per report`,
      },
      {
        label: `retention of one day (${retention.rows.toLocaleString('en')} reports): DROP TABLE of its partition`,
        value: retention.drop.ms,
        unit: 'ms',
        note: `${(retention.drop.wal / 1024).toFixed(0)} kB of WAL`,
        ratio: { to: 'the DELETE it replaces', value: retention.drop.ms / deleteWholeDayMs },
      },
      {
        label: `retention of the same day before partitions: DELETE … LIMIT ${DELETE_BATCH.toLocaleString('en')} batches`,
        value: deleteWholeDayMs,
        unit: 'ms',
        note: retention.delete.stopped
          ? `stopped after ${(retention.delete.ms / 1000).toFixed(0)} s: ${retention.delete.rows.toLocaleString('en')} of ${retention.rows.toLocaleString('en')} rows in ${retention.delete.batches} statements, ${(retention.delete.wal / 1024 / 1024).toFixed(0)} MB of WAL; the figure is the whole day at that rate (a lower bound: batches only get slower)`
          : `${retention.delete.rows.toLocaleString('en')} rows in ${retention.delete.batches} statements, ${(retention.delete.wal / 1024 / 1024).toFixed(0)} MB of WAL, dead rows left for vacuum`,
      },
    ];
    return figures;
  } finally {
    await withClient(url, (c) => c.query(`DROP TABLE IF EXISTS ${PLAIN}`));
    await geofenceQueueDrained(url);
    await checkpoint(url);
  }
};

/** The complete past day (its range ended before today) whose partition holds the most reports. */
async function fullestPastDay(url: string): Promise<{ name: string; from: string; to: string }> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ name: string; from: string; to: string }>(
      `SELECT * FROM (
         SELECT c.relname AS name, c.reltuples, (regexp_match(b, 'FROM \\(''([^'']*)''\\)'))[1] AS "from", (regexp_match(b, 'TO \\(''([^'']*)''\\)'))[1] AS "to"
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid, LATERAL pg_get_expr(c.relpartbound, c.oid) b
          WHERE i.inhparent = 'location_reports'::regclass AND b <> 'DEFAULT') p
        WHERE p."to"::timestamptz <= date_trunc('day', now(), 'UTC')
        ORDER BY reltuples DESC LIMIT 1`,
    );
    if (!rows[0]) throw new Error('no complete daily partition');
    return rows[0];
  });
}

async function oneDayRetention(url: string) {
  const day = await fullestPastDay(url);
  const rows = await withClient(url, async (c) =>
    Number((await c.query(`SELECT count(*) AS n FROM ${day.name}`)).rows[0].n),
  );
  const drop = await timedSql(url, async (c) => {
    await c.query(`DROP TABLE ${day.name}`);
    return 0;
  });
  // Restore the day from the plain copy (untimed), so a kept bench database stays whole.
  await withClient(url, async (c) => {
    await c.query(`SELECT location_reports_add_partition(($1::timestamptz AT TIME ZONE 'UTC')::date)`, [day.from]);
    await c.query(`INSERT INTO location_reports SELECT * FROM ${PLAIN} WHERE timestamp >= $1 AND timestamp < $2`, [
      day.from,
      day.to,
    ]);
    await c.query(`VACUUM ANALYZE ${day.name}`);
  });
  await checkpoint(url);
  // The job's statement before partitions (oldest received first, `received_at < cutoff`), on the
  // same rows: the generated reports of a day were received that day, so deleting what was received
  // in the day's range is the job's run that removes this day once the days before it are gone.
  let batches = 0;
  let stopped = false;
  const started = performance.now();
  const deleted = await timedSql(url, async (c) => {
    let total = 0;
    for (;;) {
      const r = await c.query(
        `DELETE FROM ${PLAIN} WHERE id IN (SELECT id FROM ${PLAIN} WHERE received_at >= $1 AND received_at < $2 ORDER BY received_at LIMIT ${DELETE_BATCH})`,
        [day.from, day.to],
      );
      batches += 1;
      total += r.rowCount ?? 0;
      if ((r.rowCount ?? 0) < DELETE_BATCH) return total;
      if (performance.now() - started > DELETE_MAX_MS) {
        stopped = true;
        return total;
      }
    }
  });
  return { rows, drop, delete: { ...deleted, batches, stopped } };
}
