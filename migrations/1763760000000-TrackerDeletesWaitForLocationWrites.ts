import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tracker deletes wait for in-flight location writes through an advisory lock instead of the
 * FOR KEY SHARE row locks ingest used to take on every tracker of a batch (see
 * src/locations/location-writes-lock.ts; 727276 is LOCATION_WRITES_LOCK_KEY). The trigger takes the
 * lock exclusively before deleting the deleted trackers' location rows: batches holding it shared
 * finish first, and their rows are deleted with the rest. Daily rows now go before hourly ones, so
 * deleting the hourly rows leaves no day for the hour-count trigger (1763750000000) to recount.
 */
export class TrackerDeletesWaitForLocationWrites1763760000000 implements MigrationInterface {
  name = 'TrackerDeletesWaitForLocationWrites1763760000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION trackers_delete_location_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(727276);
        DELETE FROM location_reports r USING deleted_trackers d WHERE r.tracker_id = d.id;
        DELETE FROM location_history_daily h USING deleted_trackers d WHERE h.tracker_id = d.id;
        DELETE FROM location_history_hourly h USING deleted_trackers d WHERE h.tracker_id = d.id;
        RETURN NULL;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION trackers_delete_location_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM location_reports r USING deleted_trackers d WHERE r.tracker_id = d.id;
        DELETE FROM location_history_hourly h USING deleted_trackers d WHERE h.tracker_id = d.id;
        DELETE FROM location_history_daily h USING deleted_trackers d WHERE h.tracker_id = d.id;
        RETURN NULL;
      END $$;
    `);
  }
}
