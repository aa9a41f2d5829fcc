import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Storage and delivery locations become geofences (a circle of `radius_m` metres around their
 * coordinates; `dwell_minutes` NULL means the configured default), status entries record where
 * they came from (`source`), and automation gets its tables:
 * - geofence_visits: the visits a tracker's replay produced. A visit points at exactly one
 *   location through a real foreign key, so deleting a visited location is refused like any
 *   other reference.
 * - geofence_pending: one row per tracker whose reports or manual entries changed since its last
 *   replay, with the earliest affected timestamp. `seq` grows with every mark, so a worker that
 *   finished a replay deletes the mark only if nothing new arrived meanwhile; `claimed_until`
 *   lets a worker hold a tracker without keeping a row lock (ingest never waits on a replay), and
 *   a crashed worker's claim simply expires. No foreign key to trackers: its check would take a
 *   share lock on the tracker row in every ingest, so ingest would wait for replays and manual
 *   entries holding that row (location_reports has none for the same reason). A mark of a
 *   deleted tracker is dropped by the worker that finds the tracker gone.
 * - geofence_progress: the last report a tracker's replay took into account, so reports arriving
 *   in order resume from there instead of replaying the tracker's whole history.
 *
 * Existing status entries become `manual`: entries written by the CSV import before this column
 * existed cannot be told apart from those of the API (both are a tracker's first entry, stamped
 * with its creation time), so only entries written from now on say `import`.
 */
export class Geofences1763790000000 implements MigrationInterface {
  name = 'Geofences1763790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['storage_locations', 'delivery_locations']) {
      await queryRunner.query(`
        ALTER TABLE ${table}
          ADD COLUMN radius_m integer NOT NULL DEFAULT 250 CONSTRAINT ${table}_radius_range CHECK (radius_m BETWEEN 10 AND 100000),
          ADD COLUMN dwell_minutes integer CONSTRAINT ${table}_dwell_range CHECK (dwell_minutes BETWEEN 0 AND 10080)`);
      // Candidate lookup: a latitude band around a report, then the exact distance.
      await queryRunner.query(`CREATE INDEX ${table}_geofence_idx ON ${table} (latitude, longitude) WHERE latitude IS NOT NULL AND longitude IS NOT NULL`);
    }
    await queryRunner.query(`
      ALTER TABLE tracker_status_history
        ADD COLUMN source text NOT NULL DEFAULT 'manual'
        CONSTRAINT tracker_status_history_source_known CHECK (source IN ('manual','import','geofence'))`);
    await queryRunner.query(`
      CREATE TABLE geofence_visits (
        id                    bigserial PRIMARY KEY,
        tracker_id            integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
        storage_location_id   integer REFERENCES storage_locations(id) ON DELETE RESTRICT,
        delivery_location_id  integer REFERENCES delivery_locations(id) ON DELETE RESTRICT,
        entered_at            timestamptz NOT NULL,
        last_seen_at          timestamptz NOT NULL,
        exited_at             timestamptz,
        report_count          integer NOT NULL,
        confirmed             boolean NOT NULL,
        CONSTRAINT geofence_visits_one_location CHECK ((storage_location_id IS NULL) <> (delivery_location_id IS NULL))
      );
      CREATE INDEX geofence_visits_tracker_idx ON geofence_visits (tracker_id, entered_at DESC, id DESC);
      CREATE INDEX geofence_visits_storage_idx ON geofence_visits (storage_location_id, entered_at DESC) WHERE storage_location_id IS NOT NULL;
      CREATE INDEX geofence_visits_delivery_idx ON geofence_visits (delivery_location_id, entered_at DESC) WHERE delivery_location_id IS NOT NULL;
      CREATE TABLE geofence_pending (
        tracker_id     integer PRIMARY KEY,
        from_ts        timestamptz NOT NULL,
        seq            bigint NOT NULL DEFAULT 1,
        marked_at      timestamptz NOT NULL DEFAULT now(),
        claimed_until  timestamptz
      );
      CREATE INDEX geofence_pending_marked_idx ON geofence_pending (marked_at);
      CREATE TABLE geofence_progress (
        tracker_id      integer PRIMARY KEY REFERENCES trackers(id) ON DELETE CASCADE,
        last_ts         timestamptz NOT NULL,
        last_report_id  bigint NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE geofence_progress; DROP TABLE geofence_pending; DROP TABLE geofence_visits`);
    await queryRunner.query(`ALTER TABLE tracker_status_history DROP COLUMN source`);
    for (const table of ['storage_locations', 'delivery_locations']) {
      await queryRunner.query(`DROP INDEX ${table}_geofence_idx`);
      await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN radius_m, DROP COLUMN dwell_minutes`);
    }
  }
}
