import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * The location history aggregates' own rules: the hourly/daily boundary of the history view, each daily row's count
 * of its hourly rows, and the location rows of deleted trackers (location rows carry no foreign key to trackers, so
 * ingest pays no per-row key check).
 */
export const LOCATION_AGGREGATE_RULES: DatabaseRules = {
  functions: [
    /** Start of today (UTC) minus HOURLY_HISTORY_DAYS; the app sets app.hourly_history_days per connection. */
    {
      name: 'location_history_cutoff',
      sql: `
      CREATE OR REPLACE FUNCTION location_history_cutoff() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$
        SELECT date_trunc('day', now(), 'UTC')
               - make_interval(days => COALESCE(NULLIF(current_setting('app.hourly_history_days', true), ''), '7')::int)
      $$`,
    },
    /**
     * Recounts `hourly_buckets` of the days a statement touched (absolute, not +n), after locking those day rows in
     * (tracker, bucket) order so concurrent batches end with the right count. Days are UTC days: '24 hours', not
     * '1 day' (which follows the session time zone's DST).
     */
    {
      name: 'location_history_daily_recount_hours',
      sql: `
      CREATE OR REPLACE FUNCTION location_history_daily_recount_hours() RETURNS trigger LANGUAGE plpgsql AS $$
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
      END $$`,
    },
    /**
     * What ON DELETE CASCADE did: takes the location-writes advisory lock (727276, LOCATION_WRITES_LOCK_KEY)
     * exclusively so in-flight ingest batches finish first, then deletes daily rows before hourly ones so the recount
     * finds no day left to recount.
     */
    {
      name: 'trackers_delete_location_rows',
      sql: `
      CREATE OR REPLACE FUNCTION trackers_delete_location_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(727276);
        DELETE FROM location_reports r USING deleted_trackers d WHERE r.tracker_id = d.id;
        DELETE FROM location_history_daily h USING deleted_trackers d WHERE h.tracker_id = d.id;
        DELETE FROM location_history_hourly h USING deleted_trackers d WHERE h.tracker_id = d.id;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'location_history_hourly_inserted_recount',
      table: 'location_history_hourly',
      sql: `
      CREATE TRIGGER location_history_hourly_inserted_recount AFTER INSERT ON location_history_hourly
        REFERENCING NEW TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION location_history_daily_recount_hours()`,
    },
    {
      name: 'location_history_hourly_deleted_recount',
      table: 'location_history_hourly',
      sql: `
      CREATE TRIGGER location_history_hourly_deleted_recount AFTER DELETE ON location_history_hourly
        REFERENCING OLD TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION location_history_daily_recount_hours()`,
    },
    {
      name: 'location_history_daily_inserted_recount',
      table: 'location_history_daily',
      sql: `
      CREATE TRIGGER location_history_daily_inserted_recount AFTER INSERT ON location_history_daily
        REFERENCING NEW TABLE AS changed_rows
        FOR EACH STATEMENT EXECUTE FUNCTION location_history_daily_recount_hours()`,
    },
    {
      name: 'trackers_delete_location_rows',
      table: 'trackers',
      sql: `
      CREATE TRIGGER trackers_delete_location_rows AFTER DELETE ON trackers
        REFERENCING OLD TABLE AS deleted_trackers
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_delete_location_rows()`,
    },
  ],
};
