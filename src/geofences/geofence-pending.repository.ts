import { Injectable } from '@nestjs/common';
import { Db, raw, sql } from '../infrastructure/database/db.js';

/** A tracker's marks taken by a replay pass. */
export interface TakenMarks {
  tracker_id: number;
  /** Earliest time the marks cover, epoch microseconds (null: replay everything). */
  from_us: string | null;
  /** When the oldest of them was written. */
  marked_at: Date;
}

/** How long a tracker whose replay failed is left alone before it is retried (from its first report). */
export const RETRY_SECONDS = 30;

/** Rows available to a pass: not held back (`claimed_until` in the future) after a failure. */
const AVAILABLE = raw(`(claimed_until IS NULL OR claimed_until < now())`);

/**
 * The queue of trackers waiting for a geofence replay (geofence_pending): append-only, one row per
 * tracker per write that needs a replay (markPendingSql), deleted by the replay that took it into
 * account, in the same transaction. A row whose `claimed_until` lies in the future is held back;
 * one whose `claimed_until` has passed was held back after a failed replay (or a worker of an
 * older version died holding it): its tracker is replayed from the beginning.
 */
@Injectable()
export class GeofencePendingRepository {
  constructor(private readonly db: Db) {}

  /** Up to `limit` trackers with available marks, the longest waiting first. */
  async candidates(limit: number): Promise<number[]> {
    const rows = await this.db.rows<{ tracker_id: number }>(
      sql`SELECT tracker_id FROM geofence_pending WHERE ${AVAILABLE} GROUP BY tracker_id ORDER BY min(marked_at), tracker_id LIMIT ${limit}`,
    );
    return rows.map((r) => r.tracker_id);
  }

  /**
   * Deletes the available marks of the trackers and answers them merged per tracker. Called by a
   * pass that holds the trackers' locks, in the snapshot its reads use: what it deletes is what it
   * replays; marks committed after the snapshot stay for the next pass.
   */
  take(trackerIds: readonly number[]): Promise<TakenMarks[]> {
    return this.db.rows<TakenMarks>(
      sql`WITH gone AS (DELETE FROM geofence_pending WHERE tracker_id IN (SELECT unnest(${trackerIds}::int[])) AND ${AVAILABLE}
                        RETURNING tracker_id, from_ts, marked_at, claimed_until)
          SELECT tracker_id, min(marked_at) AS marked_at,
                 CASE WHEN bool_and(claimed_until IS NULL) AND isfinite(min(from_ts)) THEN (extract(epoch FROM min(from_ts)) * 1000000)::bigint::text END AS from_us
            FROM gone GROUP BY tracker_id`,
    );
  }

  /** Marks of trackers that no longer exist go (a deleted tracker leaves nothing behind). */
  async dropVanished(trackerIds: readonly number[]): Promise<void> {
    await this.db.execute(
      sql`DELETE FROM geofence_pending g WHERE g.tracker_id = ANY(${trackerIds}::int[]) AND NOT EXISTS (SELECT 1 FROM trackers t WHERE t.id = g.tracker_id)`,
    );
  }

  /** Holds a tracker's marks back for RETRY_SECONDS after its replay failed. */
  async holdBack(trackerId: number): Promise<void> {
    await this.db.execute(sql`UPDATE geofence_pending SET claimed_until = now() + make_interval(secs => ${RETRY_SECONDS}) WHERE tracker_id = ${trackerId}`);
  }

  /**
   * Reclaims the space of deleted marks. Autovacuum would, but at most once per naptime; the queue
   * turns over a row per tracker per ingest batch, so the worker asks after busy passes. SKIP_LOCKED:
   * another instance vacuuming it already is enough. No truncation: giving back the empty tail
   * needs an exclusive lock that every ingest batch's insert conflicts with, and would stall the pass.
   */
  async vacuum(): Promise<void> {
    await this.db.execute(sql`VACUUM (SKIP_LOCKED, TRUNCATE false) geofence_pending`);
  }
}
