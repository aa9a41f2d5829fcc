import { sql, type Sql } from '../infrastructure/database/db.js';

/**
 * Marks trackers for a geofence replay: `rows` selects (tracker_id, ts) pairs; one queue row per
 * tracker with its earliest timestamp. The queue is append-only: this never updates or waits for a
 * row another writer or the replay worker holds. Meant to be a CTE of the statement that writes
 * the reports or the entry: the mark commits with them or not at all, so a replay that sees the
 * mark also sees what it marks (and one whose snapshot misses it leaves it for the next pass).
 */
export function markPendingSql(rows: Sql): Sql {
  return sql`INSERT INTO geofence_pending (tracker_id, from_ts)
    SELECT m.tracker_id, min(m.ts) FROM (${rows}) m(tracker_id, ts) GROUP BY m.tracker_id`;
}
