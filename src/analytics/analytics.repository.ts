import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import Cursor from 'pg-cursor';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, type Sql } from '../infrastructure/database/db.js';
import { ReadReplicas } from '../infrastructure/database/read-replicas.js';
import { aggregatesQuery, ANALYTICS_SESSION_SETTINGS, fullAnalyticsQuery, runQuery, trackerRowsQuery } from './analytics.sql.js';

const NOT_ON_REPLICA = Symbol('run not on the replica');

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

/** A consistent read of one run for a streamed export; `close()` must always be called. */
export interface AnalyticsExport {
  run: AnalyticsRunRow;
  aggregates: AggregatesRow;
  /** Tracker rows in batches, read from a server-side cursor. */
  batches(batchSize: number): AsyncGenerator<TrackerAnalyticsRow[]>;
  close(): Promise<void>;
}

/**
 * Production-run analytics (statements: analytics.sql.ts). Every method checks visibility inside
 * its own statement through the run's client; an invisible run reads as missing.
 */
@Injectable()
export class AnalyticsRepository {
  constructor(
    private readonly db: Db,
    /** The export's own connection (see openExport). */
    private readonly dataSource: DataSource,
    private readonly replicas: ReadReplicas,
  ) {}

  findRun(scope: AccessScope, runId: number): Promise<AnalyticsRunRow | null> {
    return this.db.first<AnalyticsRunRow>(runQuery(scope, runId));
  }

  /** The aggregate sections of the run and its tracker list as JSON text, from one statement. */
  full(scope: AccessScope, runId: number, asOf: Date): Promise<FullAnalyticsRow> {
    return this.analyticsStatement<FullAnalyticsRow>(fullAnalyticsQuery(scope, runId, asOf));
  }

  /** Aggregate metrics, delivery and storage performance of the run (one statement). */
  aggregates(scope: AccessScope, runId: number, asOf: Date): Promise<AggregatesRow> {
    return this.analyticsStatement<AggregatesRow>(aggregatesQuery(scope, runId, asOf));
  }

  /** Runs an analytics statement with the session settings it is tuned for. */
  private analyticsStatement<T>(statement: Sql): Promise<T> {
    return this.db.replica.transaction(async () => {
      await this.db.execute(ANALYTICS_SESSION_SETTINGS);
      return this.db.one<T>(statement);
    });
  }

  /**
   * Opens a streamed export on a dedicated connection: one REPEATABLE READ, READ ONLY transaction
   * so the run header, the aggregates and the streamed tracker rows describe the same snapshot.
   * Returns null (connection already released) when the run is missing or invisible. The cursor
   * needs the driver's connection itself, hence the pg client here rather than `Db`.
   *
   * A lag-tolerant read: on a replica when one is available. A run the replica does not show (yet)
   * is looked up on the primary before answering "missing", so a run created a moment ago exports.
   */
  async openExport(scope: AccessScope, runId: number, asOf: Date, exportTimeoutMs: number): Promise<AnalyticsExport | null> {
    const onPrimary = () => this.openExportOn(this.dataSource, scope, runId, asOf, exportTimeoutMs);
    const opened = await this.replicas.route(async (replica) => (await this.openExportOn(replica, scope, runId, asOf, exportTimeoutMs)) ?? NOT_ON_REPLICA, onPrimary);
    return opened === NOT_ON_REPLICA ? onPrimary() : opened;
  }

  private async openExportOn(dataSource: DataSource, scope: AccessScope, runId: number, asOf: Date, exportTimeoutMs: number): Promise<AnalyticsExport | null> {
    const [client, release] = (await (dataSource.driver as PostgresDriver).obtainMasterConnection()) as [PoolClient, (err?: unknown) => void];
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
      await client.query(ANALYTICS_SESSION_SETTINGS.text);
      const runSql = runQuery(scope, runId);
      const run = (await client.query<AnalyticsRunRow>(runSql.text, runSql.values)).rows[0];
      if (!run) {
        await close();
        return null;
      }
      const aggSql = aggregatesQuery(scope, runId, asOf);
      const aggregates = (await client.query<AggregatesRow>(aggSql.text, aggSql.values)).rows[0];
      return {
        run,
        aggregates,
        close,
        async *batches(batchSize: number) {
          const rows = trackerRowsQuery(scope, runId, asOf);
          cursor = client.query(new Cursor<TrackerAnalyticsRow>(rows.text, rows.values));
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
