import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One database function, trackers_follow_latest_entry(ids), for the rule by which a tracker follows
 * its latest (timestamp, id) status entry: manual entries, bulk loads (demo data) and geofence
 * automation all call it instead of three UPDATE statements of their own. A DELIVERED current entry
 * gives a tracker without destination its location; only trackers whose state changes are written.
 * Its current text lives beside the trackers feature (src/trackers/tracker-status.db-rules.ts).
 */
export class TrackersFollowLatestEntry1763980000000 implements MigrationInterface {
  name = 'TrackersFollowLatestEntry1763980000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE OR REPLACE FUNCTION trackers_follow_latest_entry(tracker_ids integer[]) RETURNS integer
  LANGUAGE sql VOLATILE AS $$
  WITH moved AS (
    UPDATE trackers t
       SET status = l.status,
           storage_location_id = l.storage_location_id,
           delivery_location_id = coalesce(t.delivery_location_id, l.delivery_location_id),
           updated_at = now()
      FROM (SELECT DISTINCT unnest(tracker_ids) AS id) u
      CROSS JOIN LATERAL (
        SELECT h.status,
               CASE WHEN h.status = 'IN_STORAGE' THEN h.storage_location_id END AS storage_location_id,
               CASE WHEN h.status = 'DELIVERED' THEN h.delivery_location_id END AS delivery_location_id
          FROM tracker_status_history h
         WHERE h.tracker_id = u.id
         ORDER BY h.timestamp DESC, h.id DESC
         LIMIT 1) l
     WHERE t.id = u.id
       AND (t.status, t.storage_location_id, t.delivery_location_id)
           IS DISTINCT FROM (l.status, l.storage_location_id, coalesce(t.delivery_location_id, l.delivery_location_id))
    RETURNING t.id)
  SELECT count(*)::int FROM moved
$$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION trackers_follow_latest_entry(integer[])`);
  }
}
