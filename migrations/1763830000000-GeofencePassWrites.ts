import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Geofence replays run in passes over many trackers (GeofenceProcessor.pass); two of their tables
 * change so that neither ingest nor a pass pays per row for what one statement can do.
 *
 * geofence_pending becomes an append-only queue: every write that needs a replay (an ingest
 * batch, a manual entry) inserts its own row per tracker instead of updating the tracker's one
 * mark. Ingest then never locks a row another ingest batch or a pass holds: with one mark per
 * tracker, batches touching the same trackers queued behind each other's mark locks, and a worker
 * claiming marks found them locked by batches in flight. A pass deletes the rows it replays in its
 * own transaction. No index: the worker and the health check read the whole (short) queue. Rows
 * are deleted as fast as they come, so autovacuum is asked to clean it by a fixed number of dead
 * rows rather than a share of a nearly empty table (the worker also vacuums it after busy passes).
 *
 * geofence_visits loses its per-row foreign keys (a pass inserts tens of thousands of visits; the
 * three key checks cost twice the insert itself). Integrity is kept as for location reports
 * (migration 1763720000000):
 *  - a pass holds its trackers' row locks while it writes their visits, and locks the locations its
 *    visits name FOR KEY SHARE in one statement, so neither can be deleted under it;
 *  - deleting trackers deletes their visits (a statement trigger, what ON DELETE CASCADE did);
 *  - deleting a location that visits still name fails with foreign_key_violation (what ON DELETE
 *    RESTRICT did; the API checks first and answers 409).
 */
export class GeofencePassWrites1763830000000 implements MigrationInterface {
  name = 'GeofencePassWrites1763830000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE geofence_pending DROP CONSTRAINT geofence_pending_pkey, DROP COLUMN seq;
      DROP INDEX geofence_pending_marked_idx;
      ALTER TABLE geofence_pending SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0);

      ALTER TABLE geofence_visits
        DROP CONSTRAINT geofence_visits_tracker_id_fkey,
        DROP CONSTRAINT geofence_visits_storage_location_id_fkey,
        DROP CONSTRAINT geofence_visits_delivery_location_id_fkey;

      CREATE FUNCTION trackers_delete_geofence_visits() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM geofence_visits v USING deleted_trackers d WHERE v.tracker_id = d.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER trackers_delete_geofence_visits AFTER DELETE ON trackers
        REFERENCING OLD TABLE AS deleted_trackers
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_delete_geofence_visits();

      CREATE FUNCTION locations_keep_visited() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM geofence_visits v JOIN deleted_locations d
                     ON d.id = CASE TG_TABLE_NAME WHEN 'storage_locations' THEN v.storage_location_id ELSE v.delivery_location_id END) THEN
          RAISE EXCEPTION 'a deleted % row is still referenced from geofence_visits', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER storage_locations_keep_visited AFTER DELETE ON storage_locations
        REFERENCING OLD TABLE AS deleted_locations FOR EACH STATEMENT EXECUTE FUNCTION locations_keep_visited();
      CREATE TRIGGER delivery_locations_keep_visited AFTER DELETE ON delivery_locations
        REFERENCING OLD TABLE AS deleted_locations FOR EACH STATEMENT EXECUTE FUNCTION locations_keep_visited();`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TRIGGER storage_locations_keep_visited ON storage_locations;
      DROP TRIGGER delivery_locations_keep_visited ON delivery_locations;
      DROP FUNCTION locations_keep_visited();
      DROP TRIGGER trackers_delete_geofence_visits ON trackers;
      DROP FUNCTION trackers_delete_geofence_visits();
      DELETE FROM geofence_visits v WHERE NOT EXISTS (SELECT 1 FROM trackers t WHERE t.id = v.tracker_id);
      ALTER TABLE geofence_visits
        ADD CONSTRAINT geofence_visits_tracker_id_fkey FOREIGN KEY (tracker_id) REFERENCES trackers(id) ON DELETE CASCADE,
        ADD CONSTRAINT geofence_visits_storage_location_id_fkey FOREIGN KEY (storage_location_id) REFERENCES storage_locations(id) ON DELETE RESTRICT,
        ADD CONSTRAINT geofence_visits_delivery_location_id_fkey FOREIGN KEY (delivery_location_id) REFERENCES delivery_locations(id) ON DELETE RESTRICT;

      ALTER TABLE geofence_pending RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_insert_scale_factor);
      CREATE TEMP TABLE geofence_pending_merged ON COMMIT DROP AS
        SELECT tracker_id, min(from_ts) AS from_ts, min(marked_at) AS marked_at, max(claimed_until) AS claimed_until FROM geofence_pending GROUP BY tracker_id;
      DELETE FROM geofence_pending;
      ALTER TABLE geofence_pending ADD COLUMN seq bigint NOT NULL DEFAULT 1;
      INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, claimed_until) SELECT tracker_id, from_ts, marked_at, claimed_until FROM geofence_pending_merged;
      ALTER TABLE geofence_pending ADD PRIMARY KEY (tracker_id);
      CREATE INDEX geofence_pending_marked_idx ON geofence_pending (marked_at)`);
  }
}
