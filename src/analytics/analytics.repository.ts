import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, type Sql } from '../infrastructure/database/db.js';
import { ReadReplicas } from '../infrastructure/database/read-replicas.js';
import { openSnapshotRead } from '../infrastructure/database/snapshot-read.js';
import {
  aggregatesQuery,
  ANALYTICS_SESSION_SETTINGS,
  exportRunQuery,
  jsonRowsQuery,
  runQuery,
  trackerRowsQuery,
} from './analytics.sql.js';

const NOT_ON_REPLICA = Symbol('run not on the replica');

export interface AnalyticsRunRow {
  id: number;
  description: string;
  start_date: Date | null;
  end_date: Date | null;
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

/**
 * One tracker's figures (rounded by the SQL, 2 decimals) as the export's cursor returns them (an
 * array, no per-row object): tracker_id,
 * tracker_name, total_journey_duration_days, delivery_location_name,
 * delivery_location_duration_days, delivery_location_duration_hours, current_status,
 * storage_visit_count, total_storage_duration_days.
 */
export type TrackerAnalyticsTuple = [number, string, number, string, number, number, string, number, number];

/** A row of the JSON result's list (jsonRowsQuery): one tracker's item of `tracker_analytics` as JSON text. */
export type TrackerJsonItem = [item: string];

/** A consistent read of one run for a streamed answer; `close()` must always be called. */
export interface AnalyticsExport<Row> {
  run: AnalyticsRunRow;
  totalTrackers: number;
  /**
   * The list rows in batches from a server-side cursor, in tracker id order; the generator returns
   * the aggregate sections (same snapshot) once the rows are read, after checking that the rows
   * and the aggregates covered every tracker of the run.
   */
  batches(batchSize: number): AsyncGenerator<Row[], AggregatesRow>;
  close(): Promise<void>;
}

/** A streamed list: its statement (one row per tracker, by id). */
type ListStatement = (scope: AccessScope, runId: number, asOf: Date) => Sql;

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

  /** The CSV export's rows (trackerRowsQuery), streamed: see openStreamed. */
  openExport(
    scope: AccessScope,
    runId: number,
    asOf: Date,
    timeoutMs: number,
  ): Promise<AnalyticsExport<TrackerAnalyticsTuple> | null> {
    return this.openStreamed<TrackerAnalyticsTuple>(trackerRowsQuery, scope, runId, asOf, timeoutMs);
  }

  /** The JSON result's tracker list as JSON text per tracker (jsonRowsQuery), streamed: see openStreamed. */
  openJson(
    scope: AccessScope,
    runId: number,
    asOf: Date,
    timeoutMs: number,
  ): Promise<AnalyticsExport<TrackerJsonItem> | null> {
    return this.openStreamed<TrackerJsonItem>(jsonRowsQuery, scope, runId, asOf, timeoutMs);
  }

  /**
   * Opens a streamed read on a dedicated connection: one REPEATABLE READ, READ ONLY transaction
   * so the run header, the count, the aggregates and the streamed rows describe the same snapshot.
   * Returns null (connection already released) when the run is missing or invisible. The
   * connection, snapshot and cursor are openSnapshotRead's.
   *
   * A lag-tolerant read: on a replica when one is available. A run the replica does not show (yet)
   * is looked up on the primary before answering "missing", so a run created a moment ago answers.
   */
  private async openStreamed<Row extends unknown[]>(
    list: ListStatement,
    scope: AccessScope,
    runId: number,
    asOf: Date,
    timeoutMs: number,
  ): Promise<AnalyticsExport<Row> | null> {
    const onPrimary = () => this.openStreamedOn<Row>(this.dataSource, list, scope, runId, asOf, timeoutMs);
    const opened = await this.replicas.route(
      async (replica) =>
        (await this.openStreamedOn<Row>(replica, list, scope, runId, asOf, timeoutMs)) ?? NOT_ON_REPLICA,
      onPrimary,
    );
    return opened === NOT_ON_REPLICA ? onPrimary() : opened;
  }

  private async openStreamedOn<Row extends unknown[]>(
    dataSource: DataSource,
    list: ListStatement,
    scope: AccessScope,
    runId: number,
    asOf: Date,
    timeoutMs: number,
  ): Promise<AnalyticsExport<Row> | null> {
    const read = await openSnapshotRead(dataSource, { settings: ANALYTICS_SESSION_SETTINGS.text, timeoutMs });
    try {
      const found = (
        await read.query<AnalyticsRunRow & { total_trackers: number; snapshot: string }>(exportRunQuery(scope, runId))
      )[0];
      if (!found) {
        await read.close();
        return null;
      }
      const { total_trackers: totalTrackers, snapshot, ...run } = found;
      // The aggregates run beside the list, on a second connection in this snapshot; without a
      // spare connection, here once the list is read.
      const aggregatesSql = aggregatesQuery(scope, runId, asOf);
      const beside = read.beside<AggregatesRow>(snapshot, aggregatesSql);
      beside.catch(() => undefined); // awaited once the list is read; the stream may end before
      return {
        run,
        totalTrackers,
        close: () => read.close(),
        async *batches(batchSize: number) {
          let trackers = 0;
          for await (const batch of read.stream<Row>(list(scope, runId, asOf), batchSize)) {
            trackers += batch.length;
            yield batch;
          }
          const aggregates = (await beside)?.[0] ?? (await read.query<AggregatesRow>(aggregatesSql))[0];
          if (trackers !== totalTrackers || aggregates.total_trackers !== totalTrackers) {
            throw new Error(
              `analytics stream: ${trackers} tracker rows and ${aggregates.total_trackers} counted, ${totalTrackers} in the run`,
            );
          }
          return aggregates;
        },
      };
    } catch (error) {
      await read.close();
      throw error;
    }
  }
}
