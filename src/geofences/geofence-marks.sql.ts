import { sql, type Sql } from '../infrastructure/database/db.js';

/**
 * Marks trackers for a geofence replay: `rows` selects (tracker_id, ts) pairs; each tracker's
 * mark keeps the earliest timestamp still to be replayed and bumps `seq`, so a worker that is
 * replaying the tracker right now keeps the mark (it deletes only the seq it claimed). Rows go in
 * tracker order, so concurrent writers lock marks in the same order. Meant to be a CTE of the
 * statement that writes the reports or the entry: the mark commits with them or not at all.
 */
export function markPendingSql(rows: Sql): Sql {
  return sql`INSERT INTO geofence_pending AS g (tracker_id, from_ts)
    SELECT m.tracker_id, min(m.ts) FROM (${rows}) m(tracker_id, ts) GROUP BY m.tracker_id ORDER BY m.tracker_id
    ON CONFLICT (tracker_id) DO UPDATE SET from_ts = LEAST(g.from_ts, EXCLUDED.from_ts), seq = g.seq + 1`;
}
