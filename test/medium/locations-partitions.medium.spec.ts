import { DataSource } from 'typeorm';
import { PartitionLocationReports1763820000000 as Partitioning } from '../../migrations/1763820000000-PartitionLocationReports.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { AccessScope } from '../../src/common/auth/access-scope.js';
import { loadConfig } from '../../src/common/config/app-config.js';
import { HealthModule } from '../../src/health/health.module.js';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source-options.js';
import type { LocationHistoryQuery } from '../../src/locations/dto/location-history.query.js';
import { LocationHistoryService } from '../../src/locations/location-history.service.js';
import { LocationRebuildService } from '../../src/locations/location-rebuild.service.js';
import { LocationHistoryHealth } from '../../src/locations/location-history.health.js';
import { LocationsModule } from '../../src/locations/locations.module.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { aggregateTables, ingestReports, rawReports, report, type RawRow } from '../support/locations.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const partitionOf = (ms: number) => `location_reports_p${utcDay(ms).replaceAll('-', '')}`;

/**
 * The conversion of an existing, unpartitioned location_reports: the schema as it was before the
 * partitioning migration, filled with reports (recent ones, far-past and future ones, duplicates
 * refused by the dedup key) and their aggregates; then the migration runs (in several batches) and
 * everything must read and write as before.
 */
describe('Locations: converting location_reports to daily partitions (migration on data)', () => {
  let database: string;
  let t: MediumContext;
  let trackers: number[];
  let before: RawRow[];
  let aggregatesBefore: Awaited<ReturnType<typeof aggregateTables>>;
  let receivedBefore: { id: string; received_at: string }[];
  const now = Date.now();
  const farPast = Date.UTC(2020, 2, 1, 10);
  const future = now + 30 * DAY_MS;
  const batchRows = Partitioning.batchRows;

  beforeAll(async () => {
    database = await createTestDatabase({ migrated: false });
    const options = dataSourceOptions(loadConfig({ NODE_ENV: 'test' }), databaseUrl(database));
    const old = new DataSource({ ...options, migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(Partitioning)) });
    await old.initialize();
    try {
      await old.runMigrations({ transaction: 'each' });
      await old.query(`INSERT INTO clients (name) VALUES ('Partition client')`);
      await old.query(`INSERT INTO brands (name, client_id) SELECT 'Partition brand', id FROM clients`);
      await old.query(
        `INSERT INTO production_runs (description, brand_id, start_date) SELECT 'Partition run', id, now() FROM brands`,
      );
      trackers = (
        await old.query<{ id: number }[]>(
          `INSERT INTO trackers (name, production_run_id) SELECT 'PT-' || n, (SELECT id FROM production_runs) FROM generate_series(1, 3) n RETURNING id`,
        )
      ).map((r) => r.id);
      // Ingest's dedup: the same (tracker, timestamp, position) twice is one row.
      const insert = (at: number[], tracker: number, lat: number) =>
        old.query(
          `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, eligible, received_at)
           SELECT $1, to_timestamp(ms / 1000.0), $2, 13.4, 1 + (ms / 60000)::bigint % 4, 5, 'old', (ms / 60000)::bigint % 4 > 0, now() - interval '1 hour'
             FROM unnest($3::float8[]) ms
           ON CONFLICT (tracker_id, timestamp, latitude, longitude) DO NOTHING`,
          [tracker, lat, at],
        );
      for (const [n, tracker] of trackers.entries()) {
        const recent = Array.from(
          { length: 150 },
          (_, i) => Math.floor((now - i * 37 * 60_000 - n * 1000) / 1000) * 1000,
        );
        await insert(recent, tracker, 52.5);
        await insert(recent.slice(0, 20), tracker, 52.5);
        await insert([farPast + n * 60_000, farPast + DAY_MS, future, future + 60_000], tracker, 48.1);
      }
      await old.query(
        `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
         SELECT DISTINCT ON (tracker_id, date_trunc('hour', timestamp, 'UTC')) tracker_id, date_trunc('hour', timestamp, 'UTC'), id, timestamp, latitude, longitude, confidence
           FROM location_reports WHERE eligible ORDER BY tracker_id, date_trunc('hour', timestamp, 'UTC'), timestamp DESC, id DESC`,
      );
      await old.query(
        `INSERT INTO location_history_daily (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
         SELECT DISTINCT ON (tracker_id, date_trunc('day', timestamp, 'UTC')) tracker_id, date_trunc('day', timestamp, 'UTC'), id, timestamp, latitude, longitude, confidence
           FROM location_reports WHERE eligible ORDER BY tracker_id, date_trunc('day', timestamp, 'UTC'), timestamp DESC, id DESC`,
      );
      before = await rawReports(old);
      aggregatesBefore = await aggregateTables(old);
      receivedBefore = await old.query(`SELECT id::text AS id, received_at::text FROM location_reports ORDER BY id`);
    } finally {
      await old.destroy();
    }
    // A small batch size, so the conversion moves this table in several statements.
    Partitioning.batchRows = 97;
    t = await createMediumContext({ database, imports: [LocationsModule, HealthModule] });
  });

  afterAll(async () => {
    Partitioning.batchRows = batchRows;
    await t?.close();
    await dropTestDatabase(database);
  });

  it('moves every row unchanged (ids, values, receipt times) into the partition of its UTC day, or the default one', async () => {
    expect(before.length).toBe(3 * 154);
    expect(await rawReports(t.db)).toEqual(before);
    expect(await t.db.query(`SELECT id::text AS id, received_at::text FROM location_reports ORDER BY id`)).toEqual(
      receivedBefore,
    );
    const [{ relkind }] = await t.db.query(`SELECT relkind FROM pg_class WHERE oid = 'location_reports'::regclass`);
    expect(relkind).toBe('p');
    const placed = await t.db.query<{ part: string; ms: string }[]>(
      `SELECT tableoid::regclass::text AS part, (extract(epoch FROM timestamp) * 1000)::bigint::text AS ms FROM location_reports`,
    );
    for (const { part, ms } of placed) {
      const at = Number(ms);
      expect(part).toBe(at < farPast + 2 * DAY_MS || at >= future ? 'location_reports_default' : partitionOf(at));
    }
    expect(await t.db.query(`SELECT count(*)::int AS n FROM location_reports_default`)).toEqual([{ n: 3 * 4 }]);
  });

  it('creates a partition for every UTC day from the oldest recent report to seven days ahead', async () => {
    const oldest = Math.min(...before.map((r) => Date.parse(r.timestamp)).filter((ms) => ms > farPast + 2 * DAY_MS));
    const expected: string[] = [];
    for (
      let day = Math.floor(oldest / DAY_MS) * DAY_MS;
      day <= Math.floor(now / DAY_MS) * DAY_MS + 7 * DAY_MS;
      day += DAY_MS
    ) {
      expected.push(partitionOf(day));
    }
    const parts = await t.db.query<{ name: string }[]>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'location_reports'::regclass AND c.relname <> 'location_reports_default' ORDER BY 1`,
    );
    expect(parts.map((p) => p.name)).toEqual(expected);
  });

  it('keeps the dedup key and the id sequence: a retried report is a duplicate, a new one gets a larger id', async () => {
    const user = await t.factories.ingest();
    const existing = before.find((r) => r.source === 'old' && r.latitude === 52.5)!;
    const farOld = before.find((r) => Date.parse(r.timestamp) < farPast + 2 * DAY_MS)!;
    const fresh = report(existing.tracker_id, new Date(now - 5 * 60_000).toISOString(), { latitude: 51.1 });
    const result = await ingestReports(t, user, [
      report(existing.tracker_id, existing.timestamp, {
        latitude: existing.latitude,
        longitude: existing.longitude,
        confidence: existing.confidence,
      }),
      report(farOld.tracker_id, farOld.timestamp, {
        latitude: farOld.latitude,
        longitude: farOld.longitude,
        confidence: farOld.confidence,
      }),
      fresh,
    ]);
    expect(result).toMatchObject({ accepted: 1, duplicates: 2, rejected: [] });
    const [{ id }] = await t.db.query(`SELECT id::text AS id FROM location_reports WHERE latitude = 51.1`);
    expect(BigInt(id)).toBeGreaterThan(BigInt(before.at(-1)!.id));
    await t.db.query(`DELETE FROM location_reports WHERE latitude = 51.1`);
    await t.get(LocationRebuildService).rebuild(AccessScope.admin());
  });

  it('reads as before: rebuild from raw gives the same aggregates, history pages, pipeline checks', async () => {
    await t.get(LocationRebuildService).rebuild(AccessScope.admin());
    expect(await aggregateTables(t.db)).toEqual({
      hourly: aggregatesBefore.hourly,
      daily: aggregatesBefore.daily.map((row) => ({ ...row, hourly_buckets: expect.any(Number) })),
    });
    const page = await t.get(LocationHistoryService).page(AccessScope.admin(), trackers[0], {
      granularity: 'hourly',
      order: 'desc',
      skip: 0,
      limit: 5,
    } as LocationHistoryQuery);
    expect(page.total).toBe(aggregatesBefore.hourly.filter((r) => r.tracker_id === trackers[0]).length);
    const checks = t.get(LocationHistoryHealth);
    expect((await checks.viewsAndPolicies(AccessScope.admin())).policies).toEqual({
      hourly_bucket_key: true,
      daily_bucket_key: true,
      report_dedup_key: true,
      history_cutoff_function: true,
    });
    expect(await checks.freshness(AccessScope.admin(), 200)).toMatchObject({
      sampled_reports: 200,
      stale_hourly: 0,
      stale_daily: 0,
    });
  });

  it('adds a day while inserts route rows of that day to the default partition, without failing any insert', async () => {
    const day = '2026-01-10';
    const inserts = async () => {
      for (let i = 0; i < 30; i++) {
        await t.db.query(
          `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
           SELECT 1 + g % 50, timestamptz '${day}' + random() * interval '23 hours', random() * 50, random() * 50, 3, true
             FROM generate_series(1, 2000) g ORDER BY 1, 2
           ON CONFLICT (tracker_id, timestamp, latitude, longitude) DO NOTHING`,
        );
      }
    };
    const churn = async () => {
      for (let i = 0; i < 8; i++) {
        await t.db.query(`SELECT location_reports_add_partition($1::date)`, [day]);
        await t.db.transaction(async (m) => {
          await m.query(`ALTER TABLE location_reports DETACH PARTITION location_reports_p20260110`);
          await m.query(`INSERT INTO location_reports_default SELECT * FROM location_reports_p20260110`);
          await m.query(`DROP TABLE location_reports_p20260110`);
        });
      }
    };
    await expect(Promise.all([inserts(), inserts(), churn()])).resolves.toBeDefined();
    await t.db.query(`DELETE FROM location_reports WHERE timestamp >= $1::date AND timestamp < $1::date + 1`, [day]);
  });

  it('converts back on the way down and again on the way up, rows unchanged', async () => {
    const ds = new DataSource(dataSourceOptions(loadConfig({ NODE_ENV: 'test' }), databaseUrl(database)));
    await ds.initialize();
    try {
      // Later migrations are undone first, down to (and including) the conversion.
      const applied = async () =>
        (await ds.query(`SELECT 1 FROM migrations WHERE name = 'PartitionLocationReports1763820000000'`)).length > 0;
      while (await applied()) await ds.undoLastMigration({ transaction: 'each' });
      expect(await ds.query(`SELECT relkind FROM pg_class WHERE oid = 'location_reports'::regclass`)).toEqual([
        { relkind: 'r' },
      ]);
      expect(await rawReports(ds)).toEqual(before);
      await ds.runMigrations({ transaction: 'each' });
      expect(await ds.query(`SELECT relkind FROM pg_class WHERE oid = 'location_reports'::regclass`)).toEqual([
        { relkind: 'p' },
      ]);
      expect(await rawReports(ds)).toEqual(before);
    } finally {
      await ds.destroy();
    }
  });
});
