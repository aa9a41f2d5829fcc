import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each daily row carries `hourly_buckets`: how many hourly rows its (tracker, UTC day) has.
 *
 * Why: the exact `total` of an hourly history page counted every hourly row of the tracker — 17 520
 * index entries for two years, most of the page's database time. Summed from the daily rows (one
 * per day, read from the primary key, which INCLUDEs the count) it is ~730 entries; only the two
 * partial days at the edges of a date filter still count hourly rows (≤ 23 each).
 *
 * The count is kept by the database, for every writer: statement-level triggers on inserted and
 * deleted hourly rows and on inserted daily rows recount the days they touched. A recount is
 * absolute (not +n), so it does not matter which of the two tables a statement — or a CTE of the
 * ingest statement — writes first. It locks the day rows before counting, in a statement of its
 * own, so under READ COMMITTED it counts with a snapshot taken after every earlier writer of those
 * days committed: concurrent batches adding hours to the same day end with the right count.
 */
export class DailyRowsCountTheirHours1763750000000 implements MigrationInterface {
  name = 'DailyRowsCountTheirHours1763750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE location_history_daily
        ADD COLUMN hourly_buckets integer NOT NULL DEFAULT 0
          CONSTRAINT location_history_daily_hourly_buckets_range CHECK (hourly_buckets BETWEEN 0 AND 24);

      UPDATE location_history_daily d SET hourly_buckets = c.n
        FROM (SELECT tracker_id, date_trunc('day', bucket, 'UTC') AS day, count(*)::int AS n
                FROM location_history_hourly GROUP BY 1, 2) c
       WHERE d.tracker_id = c.tracker_id AND d.bucket = c.day;

      ALTER TABLE location_history_daily
        DROP CONSTRAINT location_history_daily_pkey,
        ADD CONSTRAINT location_history_daily_pkey PRIMARY KEY (tracker_id, bucket) INCLUDE (hourly_buckets);

      -- Days are UTC days: '24 hours', not '1 day' (which follows the session time zone's DST).
      CREATE FUNCTION location_history_daily_recount_hours() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM changed_rows) THEN
          RETURN NULL;
        END IF;
        PERFORM 1
           FROM location_history_daily d
           JOIN (SELECT DISTINCT tracker_id, date_trunc('day', bucket, 'UTC') AS day FROM changed_rows) c
             ON d.tracker_id = c.tracker_id AND d.bucket = c.day
          ORDER BY d.tracker_id, d.bucket
            FOR NO KEY UPDATE OF d;
        UPDATE location_history_daily d
           SET hourly_buckets = x.n
          FROM (SELECT c.tracker_id, c.day,
                       (SELECT count(*)::int FROM location_history_hourly h
                         WHERE h.tracker_id = c.tracker_id AND h.bucket >= c.day AND h.bucket < c.day + interval '24 hours') AS n
                  FROM (SELECT DISTINCT tracker_id, date_trunc('day', bucket, 'UTC') AS day FROM changed_rows) c) x
         WHERE d.tracker_id = x.tracker_id AND d.bucket = x.day AND d.hourly_buckets <> x.n;
        RETURN NULL;
      END $$;

      CREATE TRIGGER location_history_hourly_inserted_recount AFTER INSERT ON location_history_hourly
        REFERENCING NEW TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION location_history_daily_recount_hours();
      CREATE TRIGGER location_history_hourly_deleted_recount AFTER DELETE ON location_history_hourly
        REFERENCING OLD TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION location_history_daily_recount_hours();
      CREATE TRIGGER location_history_daily_inserted_recount AFTER INSERT ON location_history_daily
        REFERENCING NEW TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION location_history_daily_recount_hours();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER location_history_daily_inserted_recount ON location_history_daily;
      DROP TRIGGER location_history_hourly_deleted_recount ON location_history_hourly;
      DROP TRIGGER location_history_hourly_inserted_recount ON location_history_hourly;
      DROP FUNCTION location_history_daily_recount_hours();
      ALTER TABLE location_history_daily
        DROP CONSTRAINT location_history_daily_pkey,
        ADD CONSTRAINT location_history_daily_pkey PRIMARY KEY (tracker_id, bucket);
      ALTER TABLE location_history_daily DROP COLUMN hourly_buckets;
    `);
  }
}
