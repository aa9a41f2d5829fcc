import type { AccessScope } from '../common/auth/access-scope.js';
import { raw, sql, type Sql } from '../infrastructure/database/db.js';
import { col, days, hours, lateTrackersCte, round2, trackerMetricsFrom } from './analytics-metrics.sql.js';
import { JOURNEY_COMPLETION_PERCENT } from './analytics.mapper.js';

/*
 * SQL of production-run analytics. Every statement checks visibility itself, through the run's
 * client: an invisible run reads as missing.
 */

/**
 * Transaction-local settings of every analytics statement. JIT compilation costs more than it saves
 * on these statements; the list's sort of a large run fits in 32 MB instead of spilling to disk
 * (bigger runs spill, which only slows them). Measured by bench/analytics.ts.
 */
export const ANALYTICS_SESSION_SETTINGS = raw(`SET LOCAL jit = off; SET LOCAL work_mem = '32MB'`);

/** The tracker rows without visits (one per tracker of the run, by id), in wire units: the CSV export's list. */
export function trackerRowsQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`/* analytics list */
    WITH ${lateTrackersCte(runId, asOf)}
    SELECT tm.tracker_id, tm.tracker_name,
           ${days(col('tm.journey_seconds'))} AS total_journey_duration_days,
           COALESCE(dl.name, '') AS delivery_location_name,
           ${days(col('tm.delivery_seconds'))} AS delivery_location_duration_days,
           ${hours(col('tm.delivery_seconds'))} AS delivery_location_duration_hours,
           tm.current_status,
           tm.visit_count AS storage_visit_count,
           ${days(col('tm.storage_seconds'))} AS total_storage_duration_days
    FROM ${trackerMetricsFrom(scope, runId, asOf, false, true)}
    ORDER BY t.id`;
}

/**
 * The aggregate sections as CTEs `metrics`, `delivery`, `storage`, over `tracker_metrics` (the
 * run's per-tracker figures, materialised once) and `visits` (every storage visit up to as_of).
 */
function aggregateCtes(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`
    ${lateTrackersCte(runId, asOf)},
    tracker_metrics AS (
      SELECT tm.tracker_id, tm.current_status, tm.delivered, tm.delivery_location_id, tm.delivery_seconds, tm.visit_location_ids, tm.visit_seconds
      FROM ${trackerMetricsFrom(scope, runId, asOf, false)}
    ),
    visits AS (
      SELECT tm.tracker_id, v.location_id, v.seconds
      FROM tracker_metrics tm CROSS JOIN LATERAL unnest(tm.visit_location_ids, tm.visit_seconds) AS v(location_id, seconds)
      WHERE tm.visit_location_ids IS NOT NULL
    ),
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

const AGGREGATE_COLUMNS =
  raw(`m.total_trackers, m.completed_trackers, m.completion_rate_percent, m.average_delivery_location_duration_days,
           d.items AS delivery_location_performance, s.items AS storage_location_performance`);
const AGGREGATE_FROM = raw('metrics m CROSS JOIN delivery d CROSS JOIN storage s');

/** The three aggregate sections in one row (summary, delivery performance). */
export function aggregatesQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`/* analytics aggregates */ WITH ${aggregateCtes(scope, runId, asOf)} SELECT ${AGGREGATE_COLUMNS} FROM ${AGGREGATE_FROM}`;
}

/** `journey_completion_percent` of a status (JOURNEY_COMPLETION_PERCENT) as JSON number text. */
function completionPercentJson(statusColumn: string): Sql {
  const cases = Object.entries(JOURNEY_COMPLETION_PERCENT).map(
    ([status, percent]) => `WHEN '${status}' THEN '${JSON.stringify(percent)}'`,
  );
  return raw(`(CASE ${statusColumn} ${cases.join(' ')} ELSE '0' END)`);
}

/**
 * The JSON result's list: one `item` per tracker by id, the tracker's entry of `tracker_analytics`
 * as final JSON text — field order and formats of TrackerAnalyticsResponse, as JSON.stringify would
 * write them (Node joins the items with ',').
 */
export function jsonRowsQuery(scope: AccessScope, runId: number, asOf: Date): Sql {
  return sql`/* analytics list */
    WITH ${lateTrackersCte(runId, asOf)}
    SELECT concat(
             '{"tracker_id":', tm.tracker_id,
             ',"tracker_name":', to_json(tm.tracker_name),
             ',"total_journey_duration_days":', ${days(col('tm.journey_seconds'))},
             ',"delivery_location_name":', to_json(COALESCE(dl.name, '')),
             ',"delivery_location_duration_days":', ${days(col('tm.delivery_seconds'))},
             ',"delivery_location_duration_hours":', ${hours(col('tm.delivery_seconds'))},
             ',"current_status":', to_json(tm.current_status),
             ',"journey_completion_percent":', ${completionPercentJson('tm.current_status')},
             ',"storage_location_visits":[', tm.visits, ']',
             ',"total_storage_duration_days":', ${days(col('tm.storage_seconds'))}, '}') AS item
    FROM ${trackerMetricsFrom(scope, runId, asOf, true)}
    ORDER BY t.id
    -- Never reached (a run's trackers number far fewer): under a LIMIT the planner writes each
    -- item's text after the sort, as its row is fetched, instead of sorting finished text, so the
    -- first rows leave early and the text of the next batch is built while Node sends the last.
    LIMIT ${raw(String(2 ** 31 - 1))}`;
}

/** The run header, when the run exists and is visible. */
export function runQuery(scope: AccessScope, runId: number): Sql {
  return sql`SELECT pr.id, pr.description, pr.start_date, pr.end_date
               FROM production_runs pr WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`;
}

/**
 * The run header with its number of trackers (the export's total, before its rows are read) and
 * the transaction's snapshot exported for a second connection (pg_export_snapshot()).
 */
export function exportRunQuery(scope: AccessScope, runId: number): Sql {
  return sql`SELECT pr.id, pr.description, pr.start_date, pr.end_date,
                    (SELECT count(*) FROM trackers t WHERE t.production_run_id = pr.id)::int AS total_trackers,
                    pg_export_snapshot() AS snapshot
               FROM production_runs pr WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`;
}
