import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, and, sql, type Sql } from '../infrastructure/database/db.js';
import { intArray } from '../infrastructure/database/pg-arrays.js';
import type { StatusEntrySource, TrackerStatus } from '../tracker-states/tracker-status.js';
import { ENTRY_COLUMNS, type StatusEntryRow } from './trackers.rows.js';

export interface NewStatusEntry {
  status: TrackerStatus;
  timestamp: Date;
  storageLocationId: number | null;
  deliveryLocationId: number | null;
  notes: string | null;
  createdBy: number | null;
  /** Default manual. */
  source?: StatusEntrySource;
}

/** SQL for trackers' status histories and status counts, scoped like TrackersRepository. */
@Injectable()
export class TrackerStatusRepository {
  constructor(private readonly db: Db) {}

  /**
   * Appends a status entry (null: the tracker is missing or not visible). The caller then moves the
   * tracker with `followLatestEntry`, holding the tracker's row lock (TrackersRepository.findVisible
   * with lock), so concurrent appends serialize and each compares against every committed entry.
   */
  appendStatusEntry(scope: AccessScope, trackerId: number, entry: NewStatusEntry): Promise<StatusEntryRow | null> {
    return this.db.first<StatusEntryRow>(
      sql`INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by, source)
          SELECT t.id, ${entry.status}::text, ${entry.timestamp.toISOString()}::timestamptz, ${entry.storageLocationId}::int,
                 ${entry.deliveryLocationId}::int, ${entry.notes}::text, ${entry.createdBy}::int, ${entry.source ?? 'manual'}::text FROM trackers t
           WHERE t.id = ${trackerId} AND ${scope.visibleTracker('t.id')}
          RETURNING ${ENTRY_COLUMNS}`,
    );
  }

  /**
   * Moves trackers to their latest (timestamp, id) status entry: the one rule every writer of
   * status entries follows (trackers_follow_latest_entry, tracker-status.db-rules.ts). A back-dated
   * entry never overwrites a newer state. Answers how many trackers moved.
   */
  async followLatestEntry(trackerIds: readonly number[]): Promise<number> {
    const row = await this.db.one<{ moved: number }>(
      sql`SELECT trackers_follow_latest_entry(${intArray(trackerIds)}) AS moved`,
    );
    return row.moved;
  }

  /**
   * Pauses (or resumes) status-change events for the rest of the running transaction: a write that
   * moves a tracker in two statements (a PUT setting the destination, then the new status) records
   * one event, for the second, which shows both.
   */
  async pauseStatusEvents(paused: boolean): Promise<void> {
    await this.db.execute(
      sql`SELECT set_config('tracker_pipeline.status_events', ${paused ? 'off' : 'on'}::text, true)`,
    );
  }

  /** Ascending by (timestamp, id); null when the tracker is missing or invisible. */
  async statusHistory(scope: AccessScope, id: number): Promise<StatusEntryRow[] | null> {
    const rows = await this.db.rows<StatusEntryRow & { visible_id: number }>(
      sql`SELECT t.id AS visible_id, h.id, h.tracker_id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
                 h.notes, h.created_by, h.source, h.created_at
            FROM trackers t
            JOIN production_runs pr ON pr.id = t.production_run_id
            LEFT JOIN tracker_status_history h ON h.tracker_id = t.id
           WHERE t.id = ${id} AND ${scope.visibleClient('pr.client_id')}
           ORDER BY h.timestamp, h.id`,
    );
    if (rows.length === 0) return null;
    return rows.filter((r) => r.id !== null);
  }

  async statusCounts(scope: AccessScope, productionRunId?: number): Promise<Partial<Record<TrackerStatus, number>>> {
    const where: Sql[] = [scope.visibleClient('pr.client_id')];
    if (productionRunId !== undefined) where.push(sql`t.production_run_id = ${productionRunId}`);
    const rows = await this.db.replica.rows<{ status: TrackerStatus; n: number }>(
      sql`SELECT t.status, count(*)::int AS n
            FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
           WHERE ${and(where)}
           GROUP BY t.status`,
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }
}
