import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Location rows (raw reports and both aggregates) stop carrying per-row foreign keys to trackers.
 *
 * Why: a foreign key is checked by a trigger once per inserted row, so a 10 000-report batch ran
 * 10 000 tracker look-ups (plus one per new aggregate row) — about a third of the database CPU of
 * ingestion — re-checking trackers the ingest statement has already joined. Integrity is kept by:
 *  - ingestion: the statement joins the batch's distinct trackers and locks them FOR KEY SHARE (in
 *    id order), so a tracker cannot be deleted while its reports go in, and reports of a tracker
 *    deleted before that are rejected as unknown;
 *  - deletion: a statement-level trigger on trackers deletes the location rows of the deleted
 *    trackers in the same transaction (what ON DELETE CASCADE did).
 */
export class LocationRowsFollowTrackersByTrigger1763720000000 implements MigrationInterface {
  name = 'LocationRowsFollowTrackersByTrigger1763720000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE location_reports DROP CONSTRAINT location_reports_tracker_id_fkey;
      ALTER TABLE location_history_hourly DROP CONSTRAINT location_history_hourly_tracker_id_fkey;
      ALTER TABLE location_history_daily DROP CONSTRAINT location_history_daily_tracker_id_fkey;

      CREATE FUNCTION trackers_delete_location_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM location_reports r USING deleted_trackers d WHERE r.tracker_id = d.id;
        DELETE FROM location_history_hourly h USING deleted_trackers d WHERE h.tracker_id = d.id;
        DELETE FROM location_history_daily h USING deleted_trackers d WHERE h.tracker_id = d.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER trackers_delete_location_rows AFTER DELETE ON trackers
        REFERENCING OLD TABLE AS deleted_trackers
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_delete_location_rows();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER trackers_delete_location_rows ON trackers;
      DROP FUNCTION trackers_delete_location_rows();
      DELETE FROM location_reports r WHERE NOT EXISTS (SELECT 1 FROM trackers t WHERE t.id = r.tracker_id);
      DELETE FROM location_history_hourly h WHERE NOT EXISTS (SELECT 1 FROM trackers t WHERE t.id = h.tracker_id);
      DELETE FROM location_history_daily h WHERE NOT EXISTS (SELECT 1 FROM trackers t WHERE t.id = h.tracker_id);
      ALTER TABLE location_reports ADD CONSTRAINT location_reports_tracker_id_fkey
        FOREIGN KEY (tracker_id) REFERENCES trackers(id) ON DELETE CASCADE;
      ALTER TABLE location_history_hourly ADD CONSTRAINT location_history_hourly_tracker_id_fkey
        FOREIGN KEY (tracker_id) REFERENCES trackers(id) ON DELETE CASCADE;
      ALTER TABLE location_history_daily ADD CONSTRAINT location_history_daily_tracker_id_fkey
        FOREIGN KEY (tracker_id) REFERENCES trackers(id) ON DELETE CASCADE;
    `);
  }
}
