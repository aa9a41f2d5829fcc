import type { AccessScope } from '../common/auth/access-scope.js';
import { isoUtcSql } from '../common/http/timestamps.js';
import { empty, raw, sql, type Sql } from '../infrastructure/database/db.js';

/*
 * Per-tracker figures of a run at `as_of`, from the journey facts (tracker_journey_facts, kept by
 * triggers on every status write; see its migration). A facts row summarises all of a tracker's
 * entries, so it answers for an `as_of` at or after the tracker's last entry: only the intervals
 * still open then are computed here. A tracker with entries after `as_of` ("late") is computed
 * from its entries up to `as_of` instead, windowed as the facts were — the two paths give the same
 * figures for the same entries.
 */

/**
 * Rounding happens in SQL, once, for every figure (2 decimals, half up, docs/api.md). Averages,
 * sums and extremes are taken over unrounded seconds and rounded at the end. Float arithmetic on
 * purpose (numeric is several times slower on 10⁵ rows): for whole seconds, s / 864 is exact at
 * every .5, so half-up is exact where it matters. Durations are never negative.
 */
export const round2 = (expr: Sql): Sql => sql`(floor((${expr}) * 100 + 0.5) / 100)`;
/** Seconds as days (the same expression as the facts' stored visits). */
export const days = (seconds: Sql): Sql => sql`(floor((${seconds}) / 864.0 + 0.5) / 100)`;
export const hours = (seconds: Sql): Sql => sql`(floor((${seconds}) / 36.0 + 0.5) / 100)`;
/** Seconds from b to a as float8 (EXTRACT returns numeric since PostgreSQL 14, date_part float8). */
export const secondsBetween = (a: Sql, b: Sql): Sql => sql`(date_part('epoch', ${a}) - date_part('epoch', ${b}))`;
/** A timestamp column as a JSON string literal in the service's wire format, or `null`. */
export const isoJson = (column: string): Sql => raw(`COALESCE('"' || ${isoUtcSql(column)} || '"', 'null')`);
/** The as_of bound, as a timestamptz parameter. */
export const asOfParam = (asOf: Date): Sql => sql`${asOf.toISOString()}::timestamptz`;
export const col = raw;

/** One storage visit as the API's JSON object (the facts store closed ones in this form). */
function visitJson(locationId: string, locationName: string, arrivedAt: string, departedAt: string, seconds: Sql): Sql {
  return sql`concat('{"storage_location_id":', COALESCE(${col(locationId)}::text, 'null'),
           ',"location_name":', to_json(COALESCE(${col(locationName)}, '')),
           ',"arrived_at":', ${isoJson(arrivedAt)}, ',"departed_at":', ${isoJson(departedAt)},
           ',"duration_days":', ${days(seconds)}, '}')`;
}

/**
 * CTE `late_trackers`: the figures of the run's late trackers (a facts row with entries after
 * as_of), computed from their entries up to as_of and windowed as the facts were — the two paths
 * give the same figures for the same entries. Usually empty, and found with one short range of the
 * facts' (production_run_id, last_at) index.
 */
export function lateTrackersCte(runId: number, asOf: Date): Sql {
  const at = asOfParam(asOf);
  const end = sql`COALESCE(e.next_at, ${at})`;
  const seconds = secondsBetween(end, col('e.timestamp'));
  return sql`
    late_trackers AS (
      -- Grouped by the facts row's tracker_id, whose statistics the planner has (grouped by the
      -- entries' column, equated to it inside the LATERAL, it counted one group and joined the
      -- result to every tracker by a nested loop).
      SELECT f.tracker_id,
             MIN(e.timestamp) AS first_at,
             MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS current_status,
             -- The first DELIVERED entry by (timestamp, id), as the smallest array
             -- [delivered_at, id, end of its interval, delivery location or -1] (epoch seconds).
             MIN(ARRAY[date_part('epoch', e.timestamp), e.id, date_part('epoch', ${end}),
                       COALESCE(e.delivery_location_id, -1)]) FILTER (WHERE e.status = 'DELIVERED') AS first_delivery,
             COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE')::int AS visit_count,
             SUM(${seconds}) FILTER (WHERE e.status = 'IN_STORAGE') AS storage_seconds,
             array_agg(e.storage_location_id ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visit_location_ids,
             array_agg(${seconds} ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visit_seconds,
             string_agg(${visitJson('e.storage_location_id', 'sl.name', 'e.timestamp', 'e.next_at', seconds)},
                        ',' ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visits
      FROM tracker_journey_facts f
      -- Per tracker through tracker_status_history_analytics_idx (index-only).
      CROSS JOIN LATERAL (
        SELECT h.id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
               LEAD(h.timestamp) OVER (ORDER BY h.timestamp, h.id) AS next_at
        FROM tracker_status_history h
        WHERE h.tracker_id = f.tracker_id AND h.timestamp <= ${at}
      ) e
      LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id
      WHERE f.production_run_id = ${runId} AND f.last_at > ${at}
      GROUP BY f.tracker_id
    )`;
}

/**
 * The FROM clause of one row per tracker of the run (visible through the run's client) with its
 * figures at as_of as `tm`: tracker_id, tracker_name, current_status, journey_seconds, delivered,
 * delivery_location_id, delivery_seconds, visit_count, storage_seconds, visit_location_ids and
 * visit_seconds (every storage visit up to as_of, in order, the open one included) and, when asked,
 * `visits` (the JSON text of its storage visits); `dl` is its delivery location (joined only when
 * used). Needs lateTrackersCte.
 *
 * The run's trackers meet their facts rows through the facts' run index (one range, whatever the
 * table's size), joined as a set; `streamed` looks each tracker's facts row up as its row comes
 * instead (a per-row probe, OFFSET 0 keeping it one), so a list read in id order leaves as it is
 * made and the database's work overlaps the reader's. A facts row answers for an as_of at or after
 * its last entry: only the intervals still open then are computed here; a late tracker's figures
 * come from late_trackers.
 */
export function trackerMetricsFrom(
  scope: AccessScope,
  runId: number,
  asOf: Date,
  withVisits: boolean,
  streamed = false,
): Sql {
  const at = asOfParam(asOf);
  const facts = streamed
    ? sql`LEFT JOIN LATERAL (SELECT f0.* FROM tracker_journey_facts f0 WHERE f0.tracker_id = t.id OFFSET 0) f ON true`
    : sql`LEFT JOIN tracker_journey_facts f ON f.production_run_id = ${runId} AND f.tracker_id = t.id`;
  const epoch = sql`date_part('epoch', ${at})`;
  // The open storage visit of a facts row: from its last entry to as_of.
  const open = sql`(${epoch} - f.last_epoch)`;
  return sql`
    trackers t JOIN production_runs pr ON pr.id = t.production_run_id
    ${facts}
    LEFT JOIN late_trackers p ON p.tracker_id = t.id
    -- A tracker without entries up to as_of is CREATED since its created_at; a tracker created
    -- after as_of has nothing to measure yet, hence the GREATEST(0, …).
    CROSS JOIN LATERAL (
      SELECT t.id AS tracker_id, t.name AS tracker_name,
             CASE WHEN f.last_at > ${at} THEN COALESCE(p.current_status, 'CREATED') ELSE COALESCE(f.last_status, 'CREATED') END AS current_status,
             CASE WHEN f.last_at > ${at}
                  THEN GREATEST(0, COALESCE(p.first_delivery[1], ${epoch}) - date_part('epoch', COALESCE(p.first_at, t.created_at)))
                  ELSE GREATEST(0, COALESCE(f.delivered_epoch, ${epoch}) - COALESCE(f.first_epoch, date_part('epoch', t.created_at))) END AS journey_seconds,
             CASE WHEN f.last_at > ${at} THEN p.first_delivery IS NOT NULL ELSE f.delivered_epoch IS NOT NULL END AS delivered,
             CASE WHEN f.last_at > ${at} THEN COALESCE(NULLIF(p.first_delivery[4], -1)::int, t.delivery_location_id)
                  ELSE COALESCE(f.delivered_location_id, t.delivery_location_id) END AS delivery_location_id,
             CASE WHEN f.last_at > ${at} THEN COALESCE(p.first_delivery[3] - p.first_delivery[1], 0)
                  ELSE COALESCE(COALESCE(f.delivered_until_epoch, ${epoch}) - f.delivered_epoch, 0) END AS delivery_seconds,
             CASE WHEN f.last_at > ${at} THEN COALESCE(p.visit_count, 0) ELSE COALESCE(f.visit_count, 0) END AS visit_count,
             CASE WHEN f.last_at > ${at} THEN COALESCE(p.storage_seconds, 0)::float8
                  WHEN f.last_status = 'IN_STORAGE' THEN COALESCE(f.closed_storage_seconds + ${open}, ${open})
                  ELSE COALESCE(f.closed_storage_seconds, 0) END AS storage_seconds,
             CASE WHEN f.last_at > ${at} THEN p.visit_location_ids
                  WHEN f.last_status = 'IN_STORAGE' THEN COALESCE(f.closed_visit_location_ids, '{}') || f.last_storage_location_id
                  ELSE f.closed_visit_location_ids END AS visit_location_ids,
             CASE WHEN f.last_at > ${at} THEN p.visit_seconds
                  WHEN f.last_status = 'IN_STORAGE' THEN COALESCE(f.closed_visit_seconds, '{}') || ${open}
                  ELSE f.closed_visit_seconds END AS visit_seconds
             ${withVisits ? sql`, CASE WHEN f.last_at > ${at} THEN COALESCE(p.visits, '') WHEN f.last_status = 'IN_STORAGE' THEN f.visits_json || ${days(open)} || '}' ELSE COALESCE(f.visits_json, '') END AS visits` : empty}
    ) tm
    LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
    WHERE t.production_run_id = ${runId} AND ${scope.visibleClient('pr.client_id')}`;
}
