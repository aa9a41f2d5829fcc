import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * The one rule by which a tracker follows its status history (manual entries, bulk loads, geofence
 * automation alike): its current entry is the one with the latest (timestamp, id); the tracker
 * takes that entry's status, its storage location only while IN_STORAGE, and — when the entry is
 * DELIVERED and the tracker has no destination yet — its delivery location as destination (another
 * destination stays). Only trackers whose state changes are written (and get `updated_at`), so a
 * back-dated entry changes nothing and records no status event. Answers how many trackers moved.
 * Callers lock the trackers (or run in the transaction that created them).
 */
export const trackerStatusRules: DatabaseRules = {
  functions: [
    {
      name: 'trackers_follow_latest_entry',
      sql: `CREATE OR REPLACE FUNCTION trackers_follow_latest_entry(tracker_ids integer[]) RETURNS integer
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
$$`,
    },
  ],
  triggers: [],
};
