import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/common/config/app-config.js';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source-options.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';

const relations = async (ds: DataSource) =>
  (
    await ds.query<{ name: string }[]>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'migrations' ORDER BY 1`,
    )
  ).map((r) => r.name);

describe('migrations', () => {
  let name: string;
  let ds: DataSource;
  beforeAll(async () => {
    name = await createTestDatabase({ migrated: false });
    ds = new DataSource(dataSourceOptions(loadConfig({ NODE_ENV: 'test' }), databaseUrl(name)));
    await ds.initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await dropTestDatabase(name);
  });

  it('go up, down and up again cleanly on an empty database', async () => {
    expect(await relations(ds)).toEqual([]);
    await ds.runMigrations();
    const created = await relations(ds);
    expect(created).toEqual(
      expect.arrayContaining([
        'users',
        'revoked_tokens',
        'clients',
        'brands',
        'production_runs',
        'storage_locations',
        'delivery_locations',
        'trackers',
        'tracker_status_history',
        'location_reports',
        'location_history_hourly',
        'location_history_daily',
        'location_history',
        'images',
      ]),
    );
    for (let i = 0; i < MIGRATIONS.length; i++) await ds.undoLastMigration();
    expect(await relations(ds)).toEqual([]);
    await ds.runMigrations();
    expect(await relations(ds)).toEqual(created);
  });

  it("leaves room on the aggregate tables' pages for HOT updates (fillfactor 85)", async () => {
    const rows = await ds.query<{ relname: string; reloptions: string[] | null }[]>(
      `SELECT relname, reloptions FROM pg_class WHERE relname IN ('location_history_hourly', 'location_history_daily') ORDER BY relname`,
    );
    expect(rows).toEqual([
      { relname: 'location_history_daily', reloptions: ['fillfactor=85'] },
      { relname: 'location_history_hourly', reloptions: ['fillfactor=85'] },
    ]);
  });

  it('counts the hourly rows of each existing daily row when it adds hourly_buckets, then keeps the count', async () => {
    await ds.undoLastMigration();
    const insert = (table: string, buckets: string[]) =>
      ds.query(
        `INSERT INTO ${table} (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
         SELECT 424242, b, 1, b, 1, 1, 3 FROM unnest($1::timestamptz[]) b`,
        [buckets],
      );
    await insert('location_history_hourly', [
      '2026-01-01T00:00:00Z',
      '2026-01-01T07:00:00Z',
      '2026-01-01T23:00:00Z',
      '2026-01-02T05:00:00Z',
    ]);
    await insert('location_history_daily', ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z']);
    await ds.runMigrations();
    const counts = () =>
      ds.query(`SELECT hourly_buckets FROM location_history_daily WHERE tracker_id = 424242 ORDER BY bucket`);
    expect(await counts()).toEqual([{ hourly_buckets: 3 }, { hourly_buckets: 1 }, { hourly_buckets: 0 }]);
    const [{ def }] = await ds.query(`SELECT pg_get_indexdef('location_history_daily_pkey'::regclass) AS def`);
    expect(def).toContain('(tracker_id, bucket) INCLUDE (hourly_buckets)');
    // From now on the triggers keep it, whichever table a statement writes.
    await insert('location_history_hourly', ['2026-01-03T01:00:00Z', '2026-01-03T02:00:00Z']);
    await ds.query(`DELETE FROM location_history_hourly WHERE tracker_id = 424242 AND bucket = '2026-01-01T07:00:00Z'`);
    expect(await counts()).toEqual([{ hourly_buckets: 2 }, { hourly_buckets: 1 }, { hourly_buckets: 2 }]);
    await expect(
      ds.query(`UPDATE location_history_daily SET hourly_buckets = 25 WHERE tracker_id = 424242`),
    ).rejects.toThrow(/hourly_buckets_range/);
    await ds.query(`DELETE FROM location_history_daily WHERE tracker_id = 424242`);
    await ds.query(`DELETE FROM location_history_hourly WHERE tracker_id = 424242`);
  });

  it('keeps production_runs.client_id equal to the brand client (trigger)', async () => {
    const [c1] = await ds.query(`INSERT INTO clients (name) VALUES ('m-c1') RETURNING id`);
    const [c2] = await ds.query(`INSERT INTO clients (name) VALUES ('m-c2') RETURNING id`);
    const [b] = await ds.query(`INSERT INTO brands (name, client_id) VALUES ('m-b', $1) RETURNING id`, [c1.id]);
    const [run] = await ds.query(
      `INSERT INTO production_runs (description, brand_id) VALUES ('r', $1) RETURNING client_id`,
      [b.id],
    );
    expect(run.client_id).toBe(c1.id);
    await ds.query(`UPDATE brands SET client_id = $1 WHERE id = $2`, [c2.id, b.id]);
    const [moved] = await ds.query(`SELECT client_id FROM production_runs WHERE brand_id = $1`, [b.id]);
    expect(moved.client_id).toBe(c2.id);
  });
});
