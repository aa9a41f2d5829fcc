import { raw, sql, type Sql } from '../infrastructure/database/db.js';

/**
 * A LATERAL pair giving the journey start (`<alias>.start`) of the tracker in `trackerIdColumn`:
 * the timestamp of its first IN_TRANSIT entry after its latest CREATED entry, both in
 * (timestamp, id) order — or its first IN_TRANSIT entry when it has no CREATED entry. Without such
 * an entry the start is NULL (LEFT JOIN) or the row is dropped (`inner`). Both lookups walk the
 * (tracker_id, timestamp, id) index of the status history.
 */
export function journeyStart(trackerIdColumn: string, alias: string, inner = false): Sql {
  const tracker = raw(trackerIdColumn);
  const a = raw(alias);
  const created = raw(`${alias}_created`);
  return sql`LEFT JOIN LATERAL (
      SELECT h.timestamp AS at, h.id FROM tracker_status_history h
       WHERE h.tracker_id = ${tracker} AND h.status = 'CREATED' ORDER BY h.timestamp DESC, h.id DESC LIMIT 1
    ) ${created} ON true
    ${inner ? raw('JOIN') : raw('LEFT JOIN')} LATERAL (
      SELECT h.timestamp AS start FROM tracker_status_history h
       WHERE h.tracker_id = ${tracker} AND h.status = 'IN_TRANSIT'
         AND (${created}.id IS NULL OR (h.timestamp, h.id) > (${created}.at, ${created}.id))
       ORDER BY h.timestamp, h.id LIMIT 1
    ) ${a} ON true`;
}
