import { sql, type Sql } from '../infrastructure/database/db.js';

/**
 * Marks trackers for a geofence replay: `rows` selects (tracker_id, ts) pairs; ONE queue row for
 * the whole write, naming each tracker once with its earliest timestamp (none when `rows` is
 * empty), returning its `id` and `ctid`. The queue is append-only: this never updates or waits for a row another writer or the
 * replay worker holds. Meant to be a CTE of the statement that writes the reports or the entry:
 * the mark commits with them or not at all, so a replay that sees the mark also sees what it marks
 * (and one whose snapshot misses it leaves it for the next pass).
 */
export function markPendingSql(rows: Sql): Sql {
  return sql`INSERT INTO geofence_pending (trackers, froms)
    SELECT array_agg(m.tracker_id), array_agg(m.ts)
      FROM (SELECT tracker_id, min(ts) AS ts FROM (${rows}) r(tracker_id, ts) GROUP BY tracker_id) m
    HAVING count(*) > 0
    RETURNING id, ctid`;
}
