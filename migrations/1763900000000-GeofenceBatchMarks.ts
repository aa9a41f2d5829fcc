import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A write that needs geofence replays (an ingest batch, a manual entry) queues ONE row naming all
 * its trackers (`trackers`, with the earliest marked time of each in `froms`) instead of a row per
 * tracker: a 1 000-report batch over 1 000 trackers inserted 1 000 queue rows, as many as reports.
 * A row naming one tracker (`tracker_id`, `from_ts`) is what a replay pass writes back for a tracker
 * of a row it took but could not lock; rows of that form written before this migration stay valid.
 * `id` lets a pass claim exactly the rows it chose (FOR UPDATE SKIP LOCKED). Still no index: the
 * worker and the health check read the whole, short, queue.
 */
export class GeofenceBatchMarks1763900000000 implements MigrationInterface {
  name = 'GeofenceBatchMarks1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE geofence_pending
        ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY,
        ALTER COLUMN tracker_id DROP NOT NULL,
        ALTER COLUMN from_ts DROP NOT NULL,
        ADD COLUMN trackers integer[],
        ADD COLUMN froms timestamptz[],
        ADD CONSTRAINT geofence_pending_one_form CHECK (
          (tracker_id IS NOT NULL AND from_ts IS NOT NULL AND trackers IS NULL AND froms IS NULL)
          OR (tracker_id IS NULL AND from_ts IS NULL AND cardinality(trackers) > 0 AND cardinality(froms) = cardinality(trackers)))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, claimed_until)
        SELECT u.tracker_id, u.from_ts, g.marked_at, g.claimed_until
          FROM geofence_pending g CROSS JOIN LATERAL unnest(g.trackers, g.froms) AS u(tracker_id, from_ts)
         WHERE g.trackers IS NOT NULL;
      DELETE FROM geofence_pending WHERE trackers IS NOT NULL;
      ALTER TABLE geofence_pending
        DROP CONSTRAINT geofence_pending_one_form,
        DROP COLUMN froms,
        DROP COLUMN trackers,
        DROP COLUMN id,
        ALTER COLUMN tracker_id SET NOT NULL,
        ALTER COLUMN from_ts SET NOT NULL`);
  }
}
