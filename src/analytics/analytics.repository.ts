import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import Cursor from 'pg-cursor';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { isoUtcSql } from '../common/http/timestamps.js';
import { JOURNEY_COMPLETION_PERCENT } from './analytics.mapper.js';

export interface AnalyticsRunRow {
  id: number;
  description: string;
  start_date: Date | null;
  end_date: Date | null;
}

/** One tracker's figures, rounded by the SQL (2 decimals): the CSV export's rows. */
export interface TrackerAnalyticsRow {
  tracker_id: number;
  tracker_name: string;
  total_journey_duration_days: number;
  delivery_location_name: string;
  delivery_location_duration_days: number;
  delivery_location_duration_hours: number;
  current_status: string;
  storage_visit_count: number;
  total_storage_duration_days: number;
}

export interface DeliveryPerformanceRow {
  location_name: string;
  tracker_count: number;
  average_duration_days: number;
  min_duration_days: number;
  max_duration_days: number;
}

export interface StoragePerformanceRow {
  storage_location_id: number | null;
  location_name: string;
  tracker_count: number;
  visit_count: number;
  total_duration_days: number;
  average_duration_days: number;
  min_duration_days: number;
  max_duration_days: number;
}

export interface AggregatesRow {
  total_trackers: number;
  completed_trackers: number;
  completion_rate_percent: number;
  average_delivery_location_duration_days: number;
  delivery_location_performance: DeliveryPerformanceRow[];
  storage_location_performance: StoragePerformanceRow[];
}

export interface FullAnalyticsRow extends AggregatesRow {
  /** `tracker_analytics` as final JSON text (an array of TrackerAnalyticsResponse). */
  tracker_analytics_json: string;
}

/**
 * Transaction-local settings of every analytics statement. JIT compilation costs more (≈ 150 ms
 * measured) than it saves on these statements; the window sort of a large run fits in 32 MB
 * instead of spilling to disk (a 10 000-tracker run needs ≈ 6 MB; bigger runs spill, which only
 * slows them). See bench/analytics.ts.
 */
const ANALYTICS_SESSION_SETTINGS = `SET LOCAL jit = off; SET LOCAL work_mem = '32MB'`;

/** A consistent read of one run for a streamed export; `close()` must always be called. */
export interface AnalyticsExport {
  run: AnalyticsRunRow;
  aggregates: AggregatesRow;
  /** Tracker rows in batches, read from a server-side cursor. */
  batches(batchSize: number): AsyncGenerator<TrackerAnalyticsRow[]>;
  close(): Promise<void>;
}

/**
 * Rounding happens here, once, for every figure (contract §6: 2 decimals, half up). Averages, sums
 * and extremes are taken over unrounded seconds and rounded at the end. Float arithmetic on
 * purpose (numeric is several times slower on 10⁵ rows): for whole seconds, s / 864 is exact at
 * every .5, so half-up is exact where it matters. Durations are never negative.
 */
const round2 = (expr: string): string => `(floor((${expr}) * 100 + 0.5) / 100)`;
const days = (secondsExpr: string): string => `(floor((${secondsExpr}) / 864.0 + 0.5) / 100)`;
const hours = (secondsExpr: string): string => `(floor((${secondsExpr}) / 36.0 + 0.5) / 100)`;
/** Seconds from b to a as float8 (EXTRACT returns numeric since PostgreSQL 14, date_part float8). */
const secondsBetween = (a: string, b: string): string => `(date_part('epoch', ${a}) - date_part('epoch', ${b}))`;
/** A timestamp as a JSON string literal in the service's wire format, or `null`. */
const isoJson = (expr: string): string => `COALESCE('"' || ${isoUtcSql(expr)} || '"', 'null')`;

/**
 * Per-tracker figures of contract §6 as CTEs ending in `tracker_metrics`.
 * Parameters: $1 run id, $2 as_of; scope parameters are appended.
 *
 * `entries` sorts once per run: LEAD gives each entry the timestamp of the entry that follows it
 * (which closes its interval; none → as_of). Everything else is one GROUP BY per tracker — no
 * per-tracker queries.
 */
function trackerMetricsCtes(scope: AccessScope, params: unknown[], withVisits: boolean): string {
  const visible = scope.clientFilter('pr.client_id', params);
  // Visits as JSON text in wire shape (see fullAnalyticsQuery), in (timestamp, id) order.
  const visits = withVisits
    ? `, string_agg(concat(
           '{"storage_location_id":', COALESCE(e.storage_location_id::text, 'null'),
           ',"location_name":', to_json(COALESCE(sl.name, '')),
           ',"arrived_at":', ${isoJson('e.timestamp')},
           ',"departed_at":', ${isoJson('e.next_at')},
           ',"duration_days":', ${days(secondsBetween('COALESCE(e.next_at, $2::timestamptz)', 'e.timestamp'))}, '}'),
           ',' ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visits`
    : '';
  return `
    run_trackers AS (
      SELECT t.id, t.name, t.created_at, t.delivery_location_id
      FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
      WHERE t.production_run_id = $1 AND ${visible}
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
        WHERE h.tracker_id = rt.id AND h.timestamp <= $2::timestamptz
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
             MIN(ARRAY[date_part('epoch', e.timestamp), e.id, date_part('epoch', COALESCE(e.next_at, $2::timestamptz)),
                       COALESCE(e.delivery_location_id, -1)]) FILTER (WHERE e.status = 'DELIVERED') AS first_delivery,
             COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE')::int AS visit_count,
             SUM(${secondsBetween('COALESCE(e.next_at, $2::timestamptz)', 'e.timestamp')}) FILTER (WHERE e.status = 'IN_STORAGE') AS storage_seconds
             ${visits}
      FROM entries e ${withVisits ? 'LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id' : ''}
      GROUP BY e.tracker_id
    ),
    -- A tracker without entries up to as_of is CREATED since its created_at; a tracker created
    -- after as_of has nothing to measure yet, hence the GREATEST(0, …).
    tracker_metrics AS (
      SELECT rt.id AS tracker_id,
             rt.name AS tracker_name,
             COALESCE(p.current_status, 'CREATED') AS current_status,
             GREATEST(0, COALESCE(p.first_delivery[1], date_part('epoch', $2::timestamptz)) - date_part('epoch', COALESCE(p.first_at, rt.created_at))) AS journey_seconds,
             p.first_delivery IS NOT NULL AS delivered,
             COALESCE(NULLIF(p.first_delivery[4], -1)::int, rt.delivery_location_id) AS delivery_location_id,
             COALESCE(p.first_delivery[3] - p.first_delivery[1], 0) AS delivery_seconds,
             COALESCE(p.visit_count, 0) AS visit_count,
             COALESCE(p.storage_seconds, 0)::float8 AS storage_seconds
             ${withVisits ? `, COALESCE(p.visits, '') AS visits` : ''}
      FROM run_trackers rt LEFT JOIN per_tracker p ON p.tracker_id = rt.id
    )`;
}

/** The per-tracker output columns (one row per tracker of the run), in wire units. */
function trackerRowSelect(): string {
  return `
    SELECT tm.tracker_id, tm.tracker_name,
           ${days('tm.journey_seconds')} AS total_journey_duration_days,
           COALESCE(dl.name, '') AS delivery_location_name,
           ${days('tm.delivery_seconds')} AS delivery_location_duration_days,
           ${hours('tm.delivery_seconds')} AS delivery_location_duration_hours,
           tm.current_status,
           tm.visit_count AS storage_visit_count,
           ${days('tm.storage_seconds')} AS total_storage_duration_days
    FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id`;
}

/** Aggregate sections over `tracker_metrics` / `entries`, as CTEs `metrics`, `delivery`, `storage`. */
const AGGREGATE_CTES = `
    metrics AS (
      SELECT COUNT(*)::int AS total_trackers,
             (COUNT(*) FILTER (WHERE current_status = 'DELIVERED'))::int AS completed_trackers,
             CASE WHEN COUNT(*) = 0 THEN 0
                  ELSE ${round2("(COUNT(*) FILTER (WHERE current_status = 'DELIVERED'))::float8 * 100 / COUNT(*)")} END AS completion_rate_percent,
             COALESCE(${days('AVG(delivery_seconds) FILTER (WHERE delivered)')}, 0) AS average_delivery_location_duration_days
      FROM tracker_metrics
    ),
    -- Per delivery location of delivered trackers (a delivered tracker counts even if it moved on).
    delivery AS (
      SELECT COALESCE(json_agg(json_build_object(
               'location_name', d.location_name, 'tracker_count', d.tracker_count,
               'average_duration_days', ${days('d.avg_seconds')},
               'min_duration_days', ${days('d.min_seconds')},
               'max_duration_days', ${days('d.max_seconds')})
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
               'total_duration_days', ${days('s.total_seconds')},
               'average_duration_days', ${days('s.avg_seconds')},
               'min_duration_days', ${days('s.min_seconds')},
               'max_duration_days', ${days('s.max_seconds')})
             ORDER BY lower(s.location_name), s.location_name, s.location_id), '[]'::json) AS items
      FROM (
        SELECT v.storage_location_id AS location_id, COALESCE(sl.name, '') AS location_name,
               COUNT(DISTINCT v.tracker_id)::int AS tracker_count, COUNT(*)::int AS visit_count,
               SUM(v.seconds) AS total_seconds, AVG(v.seconds) AS avg_seconds, MIN(v.seconds) AS min_seconds, MAX(v.seconds) AS max_seconds
        FROM (
          SELECT e.tracker_id, e.storage_location_id, ${secondsBetween('COALESCE(e.next_at, $2::timestamptz)', 'e.timestamp')} AS seconds
          FROM entries e WHERE e.status = 'IN_STORAGE'
        ) v LEFT JOIN storage_locations sl ON sl.id = v.storage_location_id
        GROUP BY v.storage_location_id, sl.name
      ) s
    )`;

const AGGREGATE_COLUMNS = `m.total_trackers, m.completed_trackers, m.completion_rate_percent, m.average_delivery_location_duration_days,
           d.items AS delivery_location_performance, s.items AS storage_location_performance`;
const AGGREGATE_FROM = 'metrics m CROSS JOIN delivery d CROSS JOIN storage s';

/** Tracker rows without visits, ordered by id: the CSV export's cursor. */
export function trackerRowsQuery(scope: AccessScope, runId: number, asOf: Date): { sql: string; params: unknown[] } {
  const params: unknown[] = [runId, asOf.toISOString()];
  const sql = `WITH ${trackerMetricsCtes(scope, params, false)} ${trackerRowSelect()} ORDER BY tm.tracker_id`;
  return { sql, params };
}

/** The three aggregate sections in one row (summary, delivery performance, CSV). */
export function aggregatesQuery(scope: AccessScope, runId: number, asOf: Date): { sql: string; params: unknown[] } {
  const params: unknown[] = [runId, asOf.toISOString()];
  const sql = `WITH ${trackerMetricsCtes(scope, params, false)}, ${AGGREGATE_CTES} SELECT ${AGGREGATE_COLUMNS} FROM ${AGGREGATE_FROM}`;
  return { sql, params };
}

/** `journey_completion_percent` of a status (JOURNEY_COMPLETION_PERCENT) as JSON number text. */
function completionPercentJson(statusExpr: string): string {
  const cases = Object.entries(JOURNEY_COMPLETION_PERCENT).map(([status, percent]) => `WHEN '${status}' THEN '${JSON.stringify(percent)}'`);
  return `(CASE ${statusExpr} ${cases.join(' ')} ELSE '0' END)`;
}

/**
 * The whole analytics in one statement: the history is read and windowed once (the CTEs are
 * materialised once and shared by the list and the aggregates). The tracker list comes back as the
 * final JSON text of `tracker_analytics` — field order and formats of TrackerAnalyticsResponse, as
 * JSON.stringify would write them — so a 10 000-tracker list (≈ 4 MB) is neither parsed, re-mapped
 * nor re-serialized in Node (≈ 10 ms less per request, measured).
 */
export function fullAnalyticsQuery(scope: AccessScope, runId: number, asOf: Date): { sql: string; params: unknown[] } {
  const params: unknown[] = [runId, asOf.toISOString()];
  const sql = `
    WITH ${trackerMetricsCtes(scope, params, true)}, ${AGGREGATE_CTES},
    tracker_list AS (
      SELECT '[' || COALESCE(string_agg(concat(
               '{"tracker_id":', tm.tracker_id,
               ',"tracker_name":', to_json(tm.tracker_name),
               ',"total_journey_duration_days":', ${days('tm.journey_seconds')},
               ',"delivery_location_name":', to_json(COALESCE(dl.name, '')),
               ',"delivery_location_duration_days":', ${days('tm.delivery_seconds')},
               ',"delivery_location_duration_hours":', ${hours('tm.delivery_seconds')},
               ',"current_status":', to_json(tm.current_status),
               ',"journey_completion_percent":', ${completionPercentJson('tm.current_status')},
               ',"storage_location_visits":[', tm.visits, ']',
               ',"total_storage_duration_days":', ${days('tm.storage_seconds')}, '}'),
             ',' ORDER BY tm.tracker_id), '') || ']' AS items
      FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
    )
    SELECT ${AGGREGATE_COLUMNS}, tl.items AS tracker_analytics_json FROM ${AGGREGATE_FROM} CROSS JOIN tracker_list tl`;
  return { sql, params };
}

function runQuery(scope: AccessScope, runId: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [runId];
  const sql = `SELECT pr.id, pr.description, pr.start_date, pr.end_date
               FROM production_runs pr WHERE pr.id = $1 AND ${scope.clientFilter('pr.client_id', params)}`;
  return { sql, params };
}

/**
 * SQL of production-run analytics (contract §6). Every method checks visibility inside its own
 * statement through the run's client; an invisible run reads as missing.
 */
@Injectable()
export class AnalyticsRepository {
  constructor(private readonly db: DataSource) {}

  async findRun(scope: AccessScope, runId: number): Promise<AnalyticsRunRow | null> {
    const { sql, params } = runQuery(scope, runId);
    const rows = await this.db.query<AnalyticsRunRow[]>(sql, params);
    return rows[0] ?? null;
  }

  /** The aggregate sections of the run and its tracker list as JSON text, from one statement. */
  async full(scope: AccessScope, runId: number, asOf: Date): Promise<FullAnalyticsRow> {
    return (await this.analyticsStatement<FullAnalyticsRow>(fullAnalyticsQuery(scope, runId, asOf)))[0];
  }

  /** Aggregate metrics, delivery and storage performance of the run (one statement). */
  async aggregates(scope: AccessScope, runId: number, asOf: Date): Promise<AggregatesRow> {
    return (await this.analyticsStatement<AggregatesRow>(aggregatesQuery(scope, runId, asOf)))[0];
  }

  /** Runs an analytics statement with the session settings it is tuned for. */
  private analyticsStatement<T>(query: { sql: string; params: unknown[] }): Promise<T[]> {
    return this.db.transaction(async (manager) => {
      await manager.query(ANALYTICS_SESSION_SETTINGS);
      return manager.query<T[]>(query.sql, query.params);
    });
  }

  /**
   * Opens a streamed export on a dedicated connection: one REPEATABLE READ, READ ONLY transaction
   * so the run header, the aggregates and the streamed tracker rows describe the same snapshot.
   * Returns null (connection already released) when the run is missing or invisible.
   */
  async openExport(scope: AccessScope, runId: number, asOf: Date, exportTimeoutMs: number): Promise<AnalyticsExport | null> {
    const [client, release] = (await (this.db.driver as PostgresDriver).obtainMasterConnection()) as [PoolClient, (err?: unknown) => void];
    let cursor: Cursor<TrackerAnalyticsRow> | null = null;
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      let broken: unknown;
      try {
        if (cursor) await cursor.close();
        await client.query('ROLLBACK');
      } catch (error) {
        broken = error; // a connection that cannot end its transaction is discarded, not reused
      }
      release(broken);
    };
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      // A large export to a slow client legitimately outlives the per-request statement timeout.
      await client.query(`SET LOCAL statement_timeout = ${Math.max(0, Math.floor(exportTimeoutMs))}`);
      await client.query(ANALYTICS_SESSION_SETTINGS);
      const runSql = runQuery(scope, runId);
      const run = (await client.query<AnalyticsRunRow>(runSql.sql, runSql.params)).rows[0];
      if (!run) {
        await close();
        return null;
      }
      const aggSql = aggregatesQuery(scope, runId, asOf);
      const aggregates = (await client.query<AggregatesRow>(aggSql.sql, aggSql.params)).rows[0];
      return {
        run,
        aggregates,
        close,
        async *batches(batchSize: number) {
          const { sql, params } = trackerRowsQuery(scope, runId, asOf);
          cursor = client.query(new Cursor<TrackerAnalyticsRow>(sql, params));
          for (;;) {
            const rows = await cursor.read(batchSize);
            if (rows.length === 0) return;
            yield rows;
          }
        },
      };
    } catch (error) {
      await close();
      throw error;
    }
  }
}
