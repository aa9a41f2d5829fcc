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
 * CTEs `as_of_epoch`, `run_trackers`, `entries` (late trackers only), `late_trackers` and
 * `tracker_metrics`: one row per tracker of the run with current_status, journey_seconds,
 * delivered, delivery_location_id, delivery_seconds, visit_count, storage_seconds (and `visits`,
 * the JSON text of its storage visits, when asked).
 */
export function trackerMetricsCtes(scope: AccessScope, runId: number, asOf: Date, withVisits: boolean): Sql {
  const at = asOfParam(asOf);
  const end = sql`COALESCE(e.next_at, ${at})`;
  const lateVisits = withVisits
    ? sql`, string_agg(${visitJson('e.storage_location_id', 'sl.name', 'e.timestamp', 'e.next_at', secondsBetween(end, col('e.timestamp')))},
           ',' ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visits`
    : empty;
  // The open storage visit of a facts row: from its last entry to as_of.
  const open = raw('(a.epoch - rt.last_epoch)');
  return sql`
    as_of_epoch AS (SELECT date_part('epoch', ${at}) AS epoch),
    run_trackers AS (
      SELECT t.id, t.name, t.created_at, t.delivery_location_id, f.first_epoch, f.last_epoch, f.last_status,
             f.last_storage_location_id, f.delivered_epoch, f.delivered_until_epoch, f.delivered_location_id, f.visit_count,
             f.closed_storage_seconds, f.closed_visit_location_ids, f.closed_visit_seconds,
             ${withVisits ? sql`f.visits_json,` : empty} COALESCE(f.last_at > ${at}, false) AS late
      FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
      -- One index scan for the run's trackers: the cost follows the run's size, not the table's.
      LEFT JOIN tracker_journey_facts f ON f.tracker_id = t.id
            AND f.tracker_id = ANY (ARRAY(SELECT r.id FROM trackers r WHERE r.production_run_id = ${runId}))
      WHERE t.production_run_id = ${runId} AND ${scope.visibleClient('pr.client_id')}
    ),
    entries AS (
      SELECT h.tracker_id, h.id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
             LEAD(h.timestamp) OVER w AS next_at
      FROM run_trackers rt
      -- Per tracker through tracker_status_history_analytics_idx (index-only). OFFSET 0 keeps the
      -- planner from flattening this into a hash join over the whole history table.
      CROSS JOIN LATERAL (
        SELECT h.* FROM tracker_status_history h
        WHERE h.tracker_id = rt.id AND h.timestamp <= ${at}
        OFFSET 0
      ) h
      WHERE rt.late
      WINDOW w AS (PARTITION BY h.tracker_id ORDER BY h.timestamp, h.id)
    ),
    late_trackers AS (
      SELECT e.tracker_id,
             MIN(e.timestamp) AS first_at,
             MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS current_status,
             -- The first DELIVERED entry by (timestamp, id), as the smallest array
             -- [delivered_at, id, end of its interval, delivery location or -1] (epoch seconds).
             MIN(ARRAY[date_part('epoch', e.timestamp), e.id, date_part('epoch', ${end}),
                       COALESCE(e.delivery_location_id, -1)]) FILTER (WHERE e.status = 'DELIVERED') AS first_delivery,
             COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE')::int AS visit_count,
             SUM(${secondsBetween(end, col('e.timestamp'))}) FILTER (WHERE e.status = 'IN_STORAGE') AS storage_seconds
             ${lateVisits}
      FROM entries e ${withVisits ? sql`LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id` : empty}
      GROUP BY e.tracker_id
    ),
    -- A tracker without entries up to as_of is CREATED since its created_at; a tracker created
    -- after as_of has nothing to measure yet, hence the GREATEST(0, …).
    tracker_metrics AS (
      SELECT rt.id AS tracker_id, rt.name AS tracker_name,
             COALESCE(rt.last_status, 'CREATED') AS current_status,
             GREATEST(0, COALESCE(rt.delivered_epoch, a.epoch) - COALESCE(rt.first_epoch, date_part('epoch', rt.created_at))) AS journey_seconds,
             rt.delivered_epoch IS NOT NULL AS delivered,
             COALESCE(rt.delivered_location_id, rt.delivery_location_id) AS delivery_location_id,
             COALESCE(COALESCE(rt.delivered_until_epoch, a.epoch) - rt.delivered_epoch, 0) AS delivery_seconds,
             COALESCE(rt.visit_count, 0) AS visit_count,
             CASE WHEN rt.last_status = 'IN_STORAGE' THEN COALESCE(rt.closed_storage_seconds + ${open}, ${open})
                  ELSE COALESCE(rt.closed_storage_seconds, 0) END AS storage_seconds
             ${withVisits ? sql`, CASE WHEN rt.last_status = 'IN_STORAGE' THEN rt.visits_json || ${days(open)} || '}' ELSE COALESCE(rt.visits_json, '') END AS visits` : empty}
      FROM run_trackers rt CROSS JOIN as_of_epoch a
      WHERE NOT rt.late
      UNION ALL
      SELECT rt.id, rt.name,
             COALESCE(p.current_status, 'CREATED'),
             GREATEST(0, COALESCE(p.first_delivery[1], date_part('epoch', ${at})) - date_part('epoch', COALESCE(p.first_at, rt.created_at))),
             p.first_delivery IS NOT NULL,
             COALESCE(NULLIF(p.first_delivery[4], -1)::int, rt.delivery_location_id),
             COALESCE(p.first_delivery[3] - p.first_delivery[1], 0),
             COALESCE(p.visit_count, 0),
             COALESCE(p.storage_seconds, 0)::float8
             ${withVisits ? sql`, COALESCE(p.visits, '')` : empty}
      FROM run_trackers rt LEFT JOIN late_trackers p ON p.tracker_id = rt.id
      WHERE rt.late
    )`;
}

/**
 * CTE `visits`: every storage visit of the run up to as_of with its location and seconds (the
 * facts' closed visits, the open ones at as_of, and the late trackers' IN_STORAGE entries).
 * Needs trackerMetricsCtes.
 */
export function visitsCte(asOf: Date): Sql {
  return sql`
    visits AS (
      SELECT rt.id AS tracker_id, v.location_id, v.seconds
      FROM run_trackers rt CROSS JOIN LATERAL unnest(rt.closed_visit_location_ids, rt.closed_visit_seconds) AS v(location_id, seconds)
      WHERE NOT rt.late AND rt.closed_visit_location_ids IS NOT NULL
      UNION ALL
      SELECT rt.id, rt.last_storage_location_id, a.epoch - rt.last_epoch
      FROM run_trackers rt CROSS JOIN as_of_epoch a WHERE NOT rt.late AND rt.last_status = 'IN_STORAGE'
      UNION ALL
      SELECT e.tracker_id, e.storage_location_id, ${secondsBetween(sql`COALESCE(e.next_at, ${asOfParam(asOf)})`, col('e.timestamp'))}
      FROM entries e WHERE e.status = 'IN_STORAGE'
    )`;
}
