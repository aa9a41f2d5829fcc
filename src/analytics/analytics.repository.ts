import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import Cursor from 'pg-cursor';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { AccessScope } from '../common/auth/access-scope.js';

export interface AnalyticsRunRow {
  id: number;
  description: string;
  start_date: Date | null;
  end_date: Date | null;
}

/** A storage visit as built by the SQL below (timestamps are JSON text). */
export interface StorageVisitRow {
  storage_location_id: number | null;
  location_name: string;
  arrived_at: string;
  departed_at: string | null;
  seconds: number;
}

/** One tracker's figures, unrounded, durations in seconds. `visits` only when asked for. */
export interface TrackerMetricsRow {
  tracker_id: number;
  tracker_name: string;
  current_status: string;
  journey_seconds: number;
  delivered: boolean;
  delivery_location_name: string;
  delivery_seconds: number;
  visit_count: number;
  storage_seconds: number;
  visits?: StorageVisitRow[];
}

export interface DeliveryPerformanceRow {
  location_id: number | null;
  location_name: string;
  tracker_count: number;
  avg_seconds: number;
  min_seconds: number;
  max_seconds: number;
}

export interface StoragePerformanceRow extends DeliveryPerformanceRow {
  visit_count: number;
  total_seconds: number;
}

export interface AggregatesRow {
  total_trackers: number;
  completed_trackers: number;
  avg_delivery_seconds: number;
  delivery_performance: DeliveryPerformanceRow[];
  storage_performance: StoragePerformanceRow[];
}

/** A consistent read of one run for a streamed export; `close()` must always be called. */
export interface AnalyticsExport {
  run: AnalyticsRunRow;
  aggregates: AggregatesRow;
  /** Tracker rows in batches, read from a server-side cursor. */
  batches(batchSize: number): AsyncGenerator<TrackerMetricsRow[]>;
  close(): Promise<void>;
}

/**
 * Per-tracker figures of contract §6 as CTEs ending in `tracker_metrics`.
 * Parameters: $1 run id, $2 as_of; scope parameters are appended.
 *
 * `entries` numbers nothing and sorts once: LEAD gives each entry the timestamp of the entry that
 * follows it (which closes its interval; none → as_of), and a running count of DELIVERED entries
 * marks the first one. Everything else is one GROUP BY per tracker — no per-tracker queries.
 */
function trackerMetricsCtes(scope: AccessScope, params: unknown[], withVisits: boolean): string {
  const visible = scope.clientFilter('pr.client_id', params);
  const visits = withVisits
    ? `, json_agg(json_build_object(
           'storage_location_id', e.storage_location_id,
           'location_name', COALESCE(sl.name, ''),
           'arrived_at', e.timestamp,
           'departed_at', e.next_at,
           'seconds', EXTRACT(EPOCH FROM COALESCE(e.next_at, $2::timestamptz) - e.timestamp)::float8
         ) ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE') AS visits`
    : '';
  return `
    run_trackers AS (
      SELECT t.id, t.name, t.created_at, t.delivery_location_id
      FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
      WHERE t.production_run_id = $1 AND ${visible}
    ),
    entries AS (
      SELECT h.tracker_id, h.id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
             LEAD(h.timestamp) OVER w AS next_at,
             COUNT(*) FILTER (WHERE h.status = 'DELIVERED') OVER (w ROWS UNBOUNDED PRECEDING) AS delivered_seen
      FROM run_trackers rt JOIN tracker_status_history h ON h.tracker_id = rt.id
      WHERE h.timestamp <= $2::timestamptz
      WINDOW w AS (PARTITION BY h.tracker_id ORDER BY h.timestamp, h.id)
    ),
    per_tracker AS (
      SELECT e.tracker_id,
             MIN(e.timestamp) AS first_at,
             MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS current_status,
             MIN(e.timestamp) FILTER (WHERE e.status = 'DELIVERED' AND e.delivered_seen = 1) AS delivered_at,
             MIN(COALESCE(e.next_at, $2::timestamptz)) FILTER (WHERE e.status = 'DELIVERED' AND e.delivered_seen = 1) AS delivered_until,
             MIN(e.delivery_location_id) FILTER (WHERE e.status = 'DELIVERED' AND e.delivered_seen = 1) AS delivered_location_id,
             COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE')::int AS visit_count,
             SUM(EXTRACT(EPOCH FROM COALESCE(e.next_at, $2::timestamptz) - e.timestamp)) FILTER (WHERE e.status = 'IN_STORAGE') AS storage_seconds
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
             GREATEST(0, EXTRACT(EPOCH FROM COALESCE(p.delivered_at, $2::timestamptz) - COALESCE(p.first_at, rt.created_at)))::float8 AS journey_seconds,
             p.delivered_at IS NOT NULL AS delivered,
             COALESCE(p.delivered_location_id, rt.delivery_location_id) AS delivery_location_id,
             COALESCE(EXTRACT(EPOCH FROM p.delivered_until - p.delivered_at), 0)::float8 AS delivery_seconds,
             COALESCE(p.visit_count, 0) AS visit_count,
             COALESCE(p.storage_seconds, 0)::float8 AS storage_seconds
             ${withVisits ? `, COALESCE(p.visits, '[]'::json) AS visits` : ''}
      FROM run_trackers rt LEFT JOIN per_tracker p ON p.tracker_id = rt.id
    )`;
}

function trackerRowsQuery(scope: AccessScope, runId: number, asOf: Date, withVisits: boolean): { sql: string; params: unknown[] } {
  const params: unknown[] = [runId, asOf.toISOString()];
  const sql = `
    WITH ${trackerMetricsCtes(scope, params, withVisits)}
    SELECT tm.tracker_id, tm.tracker_name, tm.current_status, tm.journey_seconds, tm.delivered,
           COALESCE(dl.name, '') AS delivery_location_name, tm.delivery_seconds, tm.visit_count, tm.storage_seconds
           ${withVisits ? ', tm.visits' : ''}
    FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
    ORDER BY tm.tracker_id`;
  return { sql, params };
}

function aggregatesQuery(scope: AccessScope, runId: number, asOf: Date): { sql: string; params: unknown[] } {
  const params: unknown[] = [runId, asOf.toISOString()];
  const sql = `
    WITH ${trackerMetricsCtes(scope, params, false)},
    metrics AS (
      SELECT COUNT(*)::int AS total_trackers,
             (COUNT(*) FILTER (WHERE current_status = 'DELIVERED'))::int AS completed_trackers,
             COALESCE(AVG(delivery_seconds) FILTER (WHERE delivered), 0)::float8 AS avg_delivery_seconds
      FROM tracker_metrics
    ),
    -- Per delivery location of delivered trackers (a delivered tracker counts even if it moved on).
    delivery AS (
      SELECT COALESCE(json_agg(d ORDER BY lower(d.location_name), d.location_name, d.location_id), '[]'::json) AS items
      FROM (
        SELECT tm.delivery_location_id AS location_id, COALESCE(dl.name, '') AS location_name,
               COUNT(*)::int AS tracker_count, AVG(tm.delivery_seconds)::float8 AS avg_seconds,
               MIN(tm.delivery_seconds)::float8 AS min_seconds, MAX(tm.delivery_seconds)::float8 AS max_seconds
        FROM tracker_metrics tm LEFT JOIN delivery_locations dl ON dl.id = tm.delivery_location_id
        WHERE tm.delivered
        GROUP BY tm.delivery_location_id, dl.name
      ) d
    ),
    -- Per storage location, durations per visit (an IN_STORAGE entry up to the next entry or as_of).
    storage AS (
      SELECT COALESCE(json_agg(s ORDER BY lower(s.location_name), s.location_name, s.location_id), '[]'::json) AS items
      FROM (
        SELECT v.storage_location_id AS location_id, COALESCE(sl.name, '') AS location_name,
               COUNT(DISTINCT v.tracker_id)::int AS tracker_count, COUNT(*)::int AS visit_count,
               SUM(v.seconds)::float8 AS total_seconds, AVG(v.seconds)::float8 AS avg_seconds,
               MIN(v.seconds)::float8 AS min_seconds, MAX(v.seconds)::float8 AS max_seconds
        FROM (
          SELECT e.tracker_id, e.storage_location_id, EXTRACT(EPOCH FROM COALESCE(e.next_at, $2::timestamptz) - e.timestamp) AS seconds
          FROM entries e WHERE e.status = 'IN_STORAGE'
        ) v LEFT JOIN storage_locations sl ON sl.id = v.storage_location_id
        GROUP BY v.storage_location_id, sl.name
      ) s
    )
    SELECT m.total_trackers, m.completed_trackers, m.avg_delivery_seconds,
           d.items AS delivery_performance, s.items AS storage_performance
    FROM metrics m CROSS JOIN delivery d CROSS JOIN storage s`;
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

  /** Every tracker of the run with its storage visits, ordered by tracker id (one statement). */
  async trackerRows(scope: AccessScope, runId: number, asOf: Date): Promise<TrackerMetricsRow[]> {
    const { sql, params } = trackerRowsQuery(scope, runId, asOf, true);
    return this.db.query<TrackerMetricsRow[]>(sql, params);
  }

  /** Aggregate metrics, delivery and storage performance of the run (one statement). */
  async aggregates(scope: AccessScope, runId: number, asOf: Date): Promise<AggregatesRow> {
    const { sql, params } = aggregatesQuery(scope, runId, asOf);
    const rows = await this.db.query<AggregatesRow[]>(sql, params);
    return rows[0];
  }

  /**
   * Opens a streamed export on a dedicated connection: one REPEATABLE READ, READ ONLY transaction
   * so the run header, the aggregates and the streamed tracker rows describe the same snapshot.
   * Returns null (connection already released) when the run is missing or invisible.
   */
  async openExport(scope: AccessScope, runId: number, asOf: Date, exportTimeoutMs: number): Promise<AnalyticsExport | null> {
    const [client, release] = (await (this.db.driver as PostgresDriver).obtainMasterConnection()) as [PoolClient, (err?: unknown) => void];
    let cursor: Cursor<TrackerMetricsRow> | null = null;
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
          const { sql, params } = trackerRowsQuery(scope, runId, asOf, false);
          cursor = client.query(new Cursor<TrackerMetricsRow>(sql, params));
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
