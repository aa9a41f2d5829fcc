import type { AccessScope } from '../../src/common/auth/access-scope.js';
import { isoUtcSql } from '../../src/common/http/timestamps.js';
import { empty, raw, sql, type Sql } from '../../src/infrastructure/database/db.js';
import { JOURNEY_COMPLETION_PERCENT } from '../../src/analytics/analytics.mapper.js';

/*
 * The analytics SQL as it was before the journey facts (tracker_journey_facts): every figure
 * windowed from the status entries at each request. Kept as the reference the facts-based
 * statements of src/analytics are compared with (test/medium/analytics-facts.medium.spec.ts).
 */

/**
 * Rounding happens here, once, for every figure (2 decimals, half up, docs/api.md). Averages, sums
 * and extremes are taken over unrounded seconds and rounded at the end. Float arithmetic on
 * purpose (numeric is several times slower on 10⁵ rows): for whole seconds, s / 864 is exact at
 * every .5, so half-up is exact where it matters. Durations are never negative.
 */
const round2 = (expr: Sql): Sql => sql`(floor((${expr}) * 100 + 0.5) / 100)`;
const days = (seconds: Sql): Sql => sql`(floor((${seconds}) / 864.0 + 0.5) / 100)`;
const hours = (seconds: Sql): Sql => sql`(floor((${seconds}) / 36.0 + 0.5) / 100)`;
/** Seconds from b to a as float8 (EXTRACT returns numeric since PostgreSQL 14, date_part float8). */
const secondsBetween = (a: Sql, b: Sql): Sql => sql`(date_part('epoch', ${a}) - date_part('epoch', ${b}))`;
/** A timestamp column as a JSON string literal in the service's wire format, or `null`. */
const isoJson = (column: string): Sql => raw(`COALESCE('"' || ${isoUtcSql(column)} || '"', 'null')`);
/** The as_of bound, as a timestamptz parameter. */
const asOfParam = (asOf: Date): Sql => sql`${asOf.toISOString()}::timestamptz`;
/** The end of an entry's interval: the next entry's timestamp, or as_of. */
const entryEnd = (asOf: Date): Sql => sql`COALESCE(e.next_at, ${asOfParam(asOf)})`;
const col = raw;

/**
 * Per-tracker figures of a run as CTEs ending in `tracker_metrics`, up to `asOf`.
 *
 * `entries` sorts once per run: LEAD gives each entry the timestamp of the entry that follows it
 * (which closes its interval; none → as_of). Everything else is one GROUP BY per tracker — no
 * per-tracker queries.
 */
function trackerMetricsCtes(scope: AccessScope, runId: number, asOf: Date, withVisits: boolean): Sql {
  // Visits as JSON text in wire shape (see fullAnalyticsQuery), in (timestamp, id) order.
  const visits = withVisits
    ? sql`, string_agg(concat(
           '{"storage_location_id":', COALESCE(e.storage_location_id::text, 'null'),
           ',"location_name":', to_json(COALESCE(sl.name, '')),
           ',"arrived_at":', ${isoJson('e.timestamp')},
           ',"departed_at":', ${isoJson('e.next_at')},
           ',"duration_days":', ${days(secondsBetween(entryEnd(asOf), col('e.timestamp')))}, '}'),
           ',' ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visits`
    : empty;
  return sql`
    run_trackers AS (
      SELECT t.id, t.name, t.created_at, t.delivery_location_id
      FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
      WHERE t.production_run_id = ${runId} AND ${scope.visibleClient('pr.client_id')}
    ),
    entries AS (
      SELECT h.tracker_id, h.id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
             LEAD(h.timestamp) OVER w AS next_at
      FROM run_trackers rt
      -- Per tracker through tracker_status_history_analytics_idx (index-only): cost follows the
      -- run's size, not the table's. OFFSET 0 keeps the planner from flattening this into a hash
      -- join over the whole history table.
      CROSS JOIN LATERAL (
        SELECT h.* FROM tracker_status_history h
        WHERE h.tracker_id = rt.id AND h.timestamp <= ${asOfParam(asOf)}
        OFFSET 0
      ) h
      WINDOW w AS (PARTITION BY h.tracker_id ORDER BY h.timestamp, h.id)
    ),
    per_tracker AS (
      SELECT e.tracker_id,
             MIN(e.timestamp) AS first_at,
             MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS current_status,
             -- The first DELIVERED entry by (timestamp, id), as the smallest array
             -- [delivered_at, id, end of its interval, delivery location or -1] (epoch seconds).
             MIN(ARRAY[date_part('epoch', e.timestamp), e.id, date_part('epoch', ${entryEnd(asOf)}),
                       COALESCE(e.delivery_location_id, -1)]) FILTER (WHERE e.status = 'DELIVERED') AS first_delivery,
             COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE')::int AS visit_count,
             SUM(${secondsBetween(entryEnd(asOf), col('e.timestamp'))}) FILTER (WHERE e.status = 'IN_STORAGE') AS storage_seconds
             ${visits}
      FROM entries e ${withVisits ? sql`LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id` : empty}
      GROUP BY e.tracker_id
    ),
    -- A tracker without entries up to as_of is CREATED since its created_at; a tracker created
    -- after as_of has nothing to measure yet, hence the GREATEST(0, …).
    tracker_metrics AS (
      SELECT rt.id AS tracker_id,
             rt.name AS tracker_name,
             COALESCE(p.current_status, 'CREATED') AS current_status,
             GREATEST(0, COALESCE(p.first_delivery[1], date_part('epoch', ${asOfParam(asOf)})) - date_part('epoch', COALESCE(p.first_at, rt.created_at))) AS journey_seconds,
             p.first_delivery IS NOT NULL AS delivered,
             COALESCE(NULLIF(p.first_delivery[4], -1)::int, rt.delivery_location_id) AS delivery_location_id,
             COALESCE(p.first_delivery[3] - p.first_delivery[1], 0) AS delivery_seconds,
             COALESCE(p.visit_count, 0) AS visit_count,
             COALESCE(p.storage_seconds, 0)::float8 AS storage_seconds
             ${withVisits ? sql`, COALESCE(p.visits, '') AS visits` : empty}
      FROM run_trackers rt LEFT JOIN per_tracker p ON p.tracker_id = rt.id
    )`;
}

/** The per-tracker output columns (one row per tracker of the run), in wire units. */
function trackerRowSelect(): Sql {
  return sql`
    SELECT tm.tracker_id, tm.tracker_name,
           ${days(col('tm.journey_seconds'))} AS total_journey_duration_days,
           COALESCE(dl.name, '') AS delivery_location_name,
           ${days(col('tm.delivery_seconds'))} AS delivery_location_duration_days,
           ${hours(col('tm.delivery_seconds'))} AS delivery_location_duration_hours,
           tm.current_status,
           tm.visit_count AS storage_visit_count,
           ${days(col('tm.storage_seconds'))} AS total_storage_duration_days
    FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id`;
}

/** Aggregate sections over `tracker_metrics` / `entries`, as CTEs `metrics`, `delivery`, `storage`. */
function aggregateCtes(asOf: Date): Sql {
  return sql`
    metrics AS (
      SELECT COUNT(*)::int AS total_trackers,
             (COUNT(*) FILTER (WHERE current_status = 'DELIVERED'))::int AS completed_trackers,
             CASE WHEN COUNT(*) = 0 THEN 0
                  ELSE ${round2(col("(COUNT(*) FILTER (WHERE current_status = 'DELIVERED'))::float8 * 100 / COUNT(*)"))} END AS completion_rate_percent,
             COALESCE(${days(col('AVG(delivery_seconds) FILTER (WHERE delivered)'))}, 0) AS average_delivery_location_duration_days
      FROM tracker_metrics
    ),
    -- Per delivery location of delivered trackers (a delivered tracker counts even if it moved on).
    delivery AS (
      SELECT COALESCE(json_agg(json_build_object(
               'location_name', d.location_name, 'tracker_count', d.tracker_count,
               'average_duration_days', ${days(col('d.avg_seconds'))},
               'min_duration_days', ${days(col('d.min_seconds'))},
               'max_duration_days', ${days(col('d.max_seconds'))})
             ORDER BY lower(d.location_name), d.location_name, d.location_id), '[]'::json) AS items
      FROM (
        SELECT tm.delivery_location_id AS location_id, COALESCE(dl.name, '') AS location_name, COUNT(*)::int AS tracker_count,
               AVG(tm.delivery_seconds) AS avg_seconds, MIN(tm.delivery_seconds) AS min_seconds, MAX(tm.delivery_seconds) AS max_seconds
        FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
        WHERE tm.delivered
        GROUP BY tm.delivery_location_id, dl.name
      ) d
    ),
    -- Per storage location, durations per visit (an IN_STORAGE entry up to the next entry or as_of).
    storage AS (
      SELECT COALESCE(json_agg(json_build_object(
               'storage_location_id', s.location_id, 'location_name', s.location_name,
               'tracker_count', s.tracker_count, 'visit_count', s.visit_count,
               'total_duration_days', ${days(col('s.total_seconds'))},
               'average_duration_days', ${days(col('s.avg_seconds'))},
               'min_duration_days', ${days(col('s.min_seconds'))},
               'max_duration_days', ${days(col('s.max_seconds'))})
             ORDER BY lower(s.location_name), s.location_name, s.location_id), '[]'::json) AS items
      FROM (
        SELECT v.storage_location_id AS location_id, COALESCE(sl.name, '') AS location_name,
               COUNT(DISTINCT v.tracker_id)::int AS tracker_count, COUNT(*)::int AS visit_count,
               SUM(v.seconds) AS total_seconds, AVG(v.seconds) AS avg_seconds, MIN(v.seconds) AS min_seconds, MAX(v.seconds) AS max_seconds
        FROM (
          SELECT e.tracker_id, e.storage_location_id, ${secondsBetween(entryEnd(asOf), col('e.timestamp'))} AS seconds
          FROM entries e WHERE e.status = 'IN_STORAGE'
        ) v LEFT JOIN storage_locations sl ON sl.id = v.storage_location_id
        GROUP BY v.storage_location_id, sl.name
      ) s
    )`;
}

const AGGREGATE_COLUMNS =
  raw(`m.total_trackers, m.completed_trackers, m.completion_rate_percent, m.average_delivery_location_duration_days,
           d.items AS delivery_location_performance, s.items AS storage_location_performance`);
const AGGREGATE_FROM = raw('metrics m CROSS JOIN delivery d CROSS JOIN storage s');

/** Tracker rows without visits, ordered by id: the CSV export's cursor. */
export function referenceTrackerRowsQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`WITH ${trackerMetricsCtes(scope, runId, asOf, false)} ${trackerRowSelect()} ORDER BY tm.tracker_id`;
}

/** The three aggregate sections in one row (summary, delivery performance, CSV). */
export function referenceAggregatesQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`WITH ${trackerMetricsCtes(scope, runId, asOf, false)}, ${aggregateCtes(asOf)} SELECT ${AGGREGATE_COLUMNS} FROM ${AGGREGATE_FROM}`;
}

/** `journey_completion_percent` of a status (JOURNEY_COMPLETION_PERCENT) as JSON number text. */
function completionPercentJson(statusColumn: string): Sql {
  const cases = Object.entries(JOURNEY_COMPLETION_PERCENT).map(
    ([status, percent]) => `WHEN '${status}' THEN '${JSON.stringify(percent)}'`,
  );
  return raw(`(CASE ${statusColumn} ${cases.join(' ')} ELSE '0' END)`);
}

/**
 * The whole analytics in one statement: the history is read and windowed once (the CTEs are
 * materialised once and shared by the list and the aggregates). The tracker list comes back as the
 * final JSON text of `tracker_analytics` — field order and formats of TrackerAnalyticsResponse, as
 * JSON.stringify would write them — so a large list (megabytes) is neither parsed, re-mapped nor
 * re-serialized in Node.
 */
export function referenceFullAnalyticsQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`
    WITH ${trackerMetricsCtes(scope, runId, asOf, true)}, ${aggregateCtes(asOf)},
    tracker_list AS (
      SELECT '[' || COALESCE(string_agg(concat(
               '{"tracker_id":', tm.tracker_id,
               ',"tracker_name":', to_json(tm.tracker_name),
               ',"total_journey_duration_days":', ${days(col('tm.journey_seconds'))},
               ',"delivery_location_name":', to_json(COALESCE(dl.name, '')),
               ',"delivery_location_duration_days":', ${days(col('tm.delivery_seconds'))},
               ',"delivery_location_duration_hours":', ${hours(col('tm.delivery_seconds'))},
               ',"current_status":', to_json(tm.current_status),
               ',"journey_completion_percent":', ${completionPercentJson('tm.current_status')},
               ',"storage_location_visits":[', tm.visits, ']',
               ',"total_storage_duration_days":', ${days(col('tm.storage_seconds'))}, '}'),
             ',' ORDER BY tm.tracker_id), '') || ']' AS items
      FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
    )
    SELECT ${AGGREGATE_COLUMNS}, tl.items AS tracker_analytics_json FROM ${AGGREGATE_FROM} CROSS JOIN tracker_list tl`;
}
