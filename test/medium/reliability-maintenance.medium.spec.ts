import pg from 'pg';
import {
  MAINTENANCE_LOCK_KEY,
  MaintenanceService,
  type MaintenanceRun,
} from '../../src/maintenance/maintenance.service.js';
import { MaintenanceModule } from '../../src/maintenance/maintenance.module.js';
import { databaseUrl } from '../support/database.js';
import { createMediumContext, type MediumContext, type MediumOptions } from '../support/medium.js';

const OLD_REPORTS = 12_000;
const RECENT_REPORTS = 500;

/** Raw reports for one tracker received `daysAgo` days ago, with distinct timestamps from `offset`. */
async function insertReports(
  t: MediumContext,
  trackerId: number,
  count: number,
  daysAgo: number,
  offset: number,
): Promise<void> {
  await t.db.query(
    `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible, received_at)
     SELECT $1, timestamptz '2026-01-01' + make_interval(secs => $4 + g), 48.1, 11.5, 3, true, now() - make_interval(days => $3)
       FROM generate_series(1, $2) AS g`,
    [trackerId, count, daysAgo, offset],
  );
}

async function count(t: MediumContext, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await t.db.query<{ n: number }[]>(`SELECT (${sql})::int AS n`, params);
  return row.n;
}

/** An instance with the maintenance job (and nothing served over HTTP). */
const maintenance = (options: MediumOptions) => createMediumContext({ ...options, imports: [MaintenanceModule] });

describe('Reliability: periodic maintenance on two instances (advisory lock)', () => {
  let a: MediumContext;
  let b: MediumContext;
  let trackerId: number;

  beforeAll(async () => {
    a = await maintenance({ env: { RAW_RETENTION_DAYS: '30' } });
    b = await maintenance({
      database: a.database,
      cachePrefix: a.config.cachePrefix,
      env: { RAW_RETENTION_DAYS: '30' },
    });
    trackerId = (await a.factories.tracker()).id;
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('concurrent triggers run once: old raw reports go in bounded batches, aggregates and recent reports stay, expired revocations go', async () => {
    await insertReports(a, trackerId, OLD_REPORTS, 40, 0);
    await insertReports(a, trackerId, RECENT_REPORTS, 1, 1_000_000);
    // An hourly aggregate built from an old report: retention must not touch it.
    await a.db.query(
      `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       SELECT tracker_id, date_trunc('hour', timestamp), id, timestamp, latitude, longitude, confidence
         FROM location_reports WHERE tracker_id = $1 ORDER BY id LIMIT 1`,
      [trackerId],
    );
    await a.db.query(
      `INSERT INTO revoked_tokens (jti, expires_at)
       SELECT gen_random_uuid(), now() + make_interval(hours => h) FROM unnest(ARRAY[-48, -1, -1, 1, 24]) AS h`,
    );

    const runs: MaintenanceRun[] = await Promise.all([
      a.get(MaintenanceService).runOnce({ batchSize: 1000 }),
      b.get(MaintenanceService).runOnce({ batchSize: 1000 }),
    ]);

    const ran = runs.filter((r) => r.ran);
    expect(ran).toHaveLength(1);
    expect(runs.filter((r) => !r.ran)).toEqual([{ ran: false }]);
    expect(ran[0]).toMatchObject({
      ran: true,
      reportsDeleted: OLD_REPORTS,
      batches: OLD_REPORTS / 1000 + 1,
      revokedTokensPurged: 3,
    });
    expect(await count(a, `SELECT count(*) FROM location_reports WHERE received_at < now() - interval '30 days'`)).toBe(
      0,
    );
    expect(await count(a, 'SELECT count(*) FROM location_reports WHERE tracker_id = $1', [trackerId])).toBe(
      RECENT_REPORTS,
    );
    expect(await count(a, 'SELECT count(*) FROM location_history_hourly WHERE tracker_id = $1', [trackerId])).toBe(1);
    expect(await count(a, 'SELECT count(*) FROM revoked_tokens')).toBe(2);
    expect(await count(a, 'SELECT count(*) FROM revoked_tokens WHERE expires_at < now()')).toBe(0);
    // The lock is released after the run.
    expect(
      await count(a, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1`, [
        MAINTENANCE_LOCK_KEY,
      ]),
    ).toBe(0);
  });

  it('no instance runs while another session holds the lock; the next trigger runs', async () => {
    await insertReports(a, trackerId, 50, 40, 2_000_000);
    const holder = new pg.Client({ connectionString: databaseUrl(a.database) });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MAINTENANCE_LOCK_KEY]);
      expect(await a.get(MaintenanceService).runOnce()).toEqual({ ran: false });
      expect(await b.get(MaintenanceService).runOnce()).toEqual({ ran: false });
      expect(await count(a, 'SELECT count(*) FROM location_reports WHERE tracker_id = $1', [trackerId])).toBe(
        RECENT_REPORTS + 50,
      );
      await holder.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
    } finally {
      await holder.end();
    }
    expect(await b.get(MaintenanceService).runOnce()).toMatchObject({ ran: true, reportsDeleted: 50 });
  });

  it('with RAW_RETENTION_DAYS unset (default 0) keeps every raw report and still purges expired revocations', async () => {
    const c = await maintenance({ database: a.database, cachePrefix: a.config.cachePrefix });
    try {
      expect(c.config.rawRetentionDays).toBe(0);
      await insertReports(a, trackerId, 20, 400, 3_000_000);
      await a.db.query(
        `INSERT INTO revoked_tokens (jti, expires_at) VALUES (gen_random_uuid(), now() - interval '1 hour')`,
      );
      expect(await c.get(MaintenanceService).runOnce()).toMatchObject({
        ran: true,
        reportsDeleted: 0,
        batches: 0,
        revokedTokensPurged: 1,
      });
      expect(await count(a, 'SELECT count(*) FROM location_reports WHERE tracker_id = $1', [trackerId])).toBe(
        RECENT_REPORTS + 20,
      );
    } finally {
      await c.close();
    }
  });
});
