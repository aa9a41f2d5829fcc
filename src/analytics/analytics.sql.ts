import type { AccessScope } from '../common/auth/access-scope.js';
import { raw, sql, type Sql } from '../infrastructure/database/db.js';
import { col, days, hours, round2, trackerMetricsCtes, visitsCte } from './analytics-metrics.sql.js';
import { JOURNEY_COMPLETION_PERCENT } from './analytics.mapper.js';

/*
 * SQL of production-run analytics. Every statement checks visibility itself, through the run's
 * client: an invisible run reads as missing.
 */

/**
 * Transaction-local settings of every analytics statement. JIT compilation costs more than it saves
 * on these statements; the window sort of a large run fits in 32 MB instead of spilling to disk
 * (bigger runs spill, which only slows them). Measured by bench/analytics.ts.
 */
export const ANALYTICS_SESSION_SETTINGS = raw(`SET LOCAL jit = off; SET LOCAL work_mem = '32MB'`);

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

/** Aggregate sections over `tracker_metrics` / `visits`, as CTEs `metrics`, `delivery`, `storage`. */
function aggregateCtes(asOf: Date): Sql {
  return sql`
    ${visitsCte(asOf)},
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
        SELECT v.location_id, COALESCE(sl.name, '') AS location_name,
               COUNT(DISTINCT v.tracker_id)::int AS tracker_count, COUNT(*)::int AS visit_count,
               SUM(v.seconds) AS total_seconds, AVG(v.seconds) AS avg_seconds, MIN(v.seconds) AS min_seconds, MAX(v.seconds) AS max_seconds
        FROM visits v LEFT JOIN storage_locations sl ON sl.id = v.location_id
        GROUP BY v.location_id, sl.name
      ) s
    )`;
}

const AGGREGATE_COLUMNS = raw(`m.total_trackers, m.completed_trackers, m.completion_rate_percent, m.average_delivery_location_duration_days,
           d.items AS delivery_location_performance, s.items AS storage_location_performance`);
const AGGREGATE_FROM = raw('metrics m CROSS JOIN delivery d CROSS JOIN storage s');

/** Tracker rows without visits, ordered by id: the CSV export's cursor. */
export function trackerRowsQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`WITH ${trackerMetricsCtes(scope, runId, asOf, false)} ${trackerRowSelect()} ORDER BY tm.tracker_id`;
}

/**
 * The CSV export's cursor, in one statement so the tracker figures are computed once: the tracker
 * rows ordered by id (columns of trackerRowSelect, then `aggregates` null and `part` 0), then one
 * last row whose `aggregates` holds the aggregate sections as a JSON object (AggregatesRow).
 */
export function exportRowsQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`
    WITH ${trackerMetricsCtes(scope, runId, asOf, false)}, ${aggregateCtes(asOf)}
    SELECT r.*, NULL::json AS aggregates, 0 AS part FROM (${trackerRowSelect()}) r
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, row_to_json(a), 1
    FROM (SELECT ${AGGREGATE_COLUMNS} FROM ${AGGREGATE_FROM}) a
    ORDER BY part, tracker_id`;
}

/** The three aggregate sections in one row (summary, delivery performance). */
export function aggregatesQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`WITH ${trackerMetricsCtes(scope, runId, asOf, false)}, ${aggregateCtes(asOf)} SELECT ${AGGREGATE_COLUMNS} FROM ${AGGREGATE_FROM}`;
}

/** `journey_completion_percent` of a status (JOURNEY_COMPLETION_PERCENT) as JSON number text. */
function completionPercentJson(statusColumn: string): Sql {
  const cases = Object.entries(JOURNEY_COMPLETION_PERCENT).map(([status, percent]) => `WHEN '${status}' THEN '${JSON.stringify(percent)}'`);
  return raw(`(CASE ${statusColumn} ${cases.join(' ')} ELSE '0' END)`);
}

/**
 * Trackers per row of the JSON result's cursor (~100 KB of JSON text each): each row's text stays
 * a short-lived object of V8's young generation (strings over 128 KB go to the large-object space,
 * which only a full collection frees).
 */
export const JSON_CHUNK_TRACKERS = 250;

/**
 * The JSON result's cursor, in one statement so the tracker figures are computed once (the CTEs
 * are materialised once and shared by the list and the aggregates). First the items of
 * `tracker_analytics` as final JSON text — field order and formats of TrackerAnalyticsResponse, as
 * JSON.stringify would write them — in rows of JSON_CHUNK_TRACKERS trackers by id, each row the
 * items joined by ',' and preceded by ',' but in the first row (`items`: the rows' text joined
 * is the list without its brackets), their number (`trackers`), `aggregates` null and `part` 0;
 * then one row whose `aggregates` holds the aggregate sections (AggregatesRow) and `part` 1.
 *
 * The rows come in the order of the UNION ALL branches without a sort over the whole output (that
 * would hold every chunk, megabytes, before the first left): an Append runs its branches in order,
 * and a cursor's portal never runs a parallel plan. The reader checks it anyway (the aggregates row
 * last, the streamed trackers adding up to the run's count). Only the narrow metrics rows are
 * sorted; each chunk's text is built as its group is aggregated, so the cursor streams.
 */
export function jsonRowsQuery(scope: AccessScope, runId: number, asOf: Date, chunkTrackers = JSON_CHUNK_TRACKERS): Sql {
  return sql`
    WITH ${trackerMetricsCtes(scope, runId, asOf, true)}, ${aggregateCtes(asOf)},
    numbered AS (
      SELECT tm.*, (row_number() OVER (ORDER BY tm.tracker_id) - 1) / ${raw(String(Math.max(1, Math.floor(chunkTrackers))))} AS chunk FROM tracker_metrics tm
    )
    (SELECT CASE WHEN tm.chunk > 0 THEN ',' ELSE '' END || string_agg(concat(
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
             ',' ORDER BY tm.tracker_id) AS items,
            count(*)::int AS trackers, NULL::json AS aggregates, 0 AS part
       FROM numbered tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
      GROUP BY tm.chunk ORDER BY tm.chunk)
    UNION ALL
    SELECT NULL, NULL, row_to_json(a), 1 FROM (SELECT ${AGGREGATE_COLUMNS} FROM ${AGGREGATE_FROM}) a`;
}

/** The run header, when the run exists and is visible. */
export function runQuery(scope: AccessScope, runId: number): Sql {
  return sql`SELECT pr.id, pr.description, pr.start_date, pr.end_date
               FROM production_runs pr WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`;
}

/** The run header with its number of trackers (the export's total, before its rows are read). */
export function exportRunQuery(scope: AccessScope, runId: number): Sql {
  return sql`SELECT pr.id, pr.description, pr.start_date, pr.end_date,
                    (SELECT count(*) FROM trackers t WHERE t.production_run_id = pr.id)::int AS total_trackers
               FROM production_runs pr WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`;
}

