import { Injectable } from '@nestjs/common';
import { Db, raw, sql } from '../infrastructure/database/db.js';
import { LOCATION_WRITES_LOCK_KEY } from '../location-reports/location-writes-lock.js';

/** A tracker's marks taken by a replay pass. */
export interface TakenMarks {
  tracker_id: number;
  /** Earliest time the marks cover, epoch microseconds (null: replay everything). */
  from_us: string | null;
  /** When the oldest of them was written. */
  marked_at: Date;
}

/** A queue row a pass may take, with the trackers it names. */
export interface QueueRow {
  id: string;
  trackers: number[];
}

/** How long a tracker whose replay failed is left alone before it is retried (from its first report). */
export const RETRY_SECONDS = 30;

/** Rows available to a pass: not held back (`claimed_until` in the future) after a failure. */
const AVAILABLE = raw(`(claimed_until IS NULL OR claimed_until < now())`);
/**
 * How long after its write a queue row waits at most for ingest batches that began before its
 * writer and are still in flight (see `available`).
 */
export const IN_FLIGHT_WAIT_MS = 2000;

/**
 * When the oldest ingest batch still in flight began (its transaction holds LOCATION_WRITES_LOCK_KEY
 * shared); NULL when none is. pg_locks and pg_stat_activity are live views, not MVCC.
 */
const OLDEST_INGEST_IN_FLIGHT = raw(`(SELECT min(a.xact_start) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = 0 AND l.objid = ${LOCATION_WRITES_LOCK_KEY} AND l.objsubid = 1 AND l.mode = 'ShareLock' AND l.granted
      AND a.pid <> pg_backend_pid())`);

/** The trackers a row names, whichever its form. */
const TRACKERS = raw(`coalesce(trackers, ARRAY[tracker_id])`);

/**
 * The queue of trackers waiting for a geofence replay (geofence_pending), append-only. A row is
 * the marks of one write (GeofenceQueue.mark: an ingest batch, a manual entry) naming its trackers
 * (`trackers`, `froms`), or the mark of one tracker (`tracker_id`, `from_ts`), which a pass writes
 * back for a tracker of a row it took but could not lock. A pass deletes whole rows, in the
 * transaction of the replay that took them into account. A row whose `claimed_until` lies in the
 * future is held back; one whose `claimed_until` has passed was held back after a failed replay
 * (or a worker of an older version died holding it): its tracker is replayed from the beginning.
 */
@Injectable()
export class GeofencePendingRepository {
  constructor(private readonly db: Db) {}

  /**
   * Available rows, the longest waiting first (all of them: the queue is short). Rows written by
   * transactions that began after an ingest batch still in flight (`began_at`: the writer's start)
   * wait for it, for up to IN_FLIGHT_WAIT_MS after they were written (`marked_at`): concurrent
   * batches of the same trackers usually carry consecutive reports, and a pass that took the later
   * one first would have to rewind every tracker they share once the earlier one commits.
   */
  available(): Promise<QueueRow[]> {
    return this.db.rows<QueueRow>(
      sql`SELECT id::text AS id, ${TRACKERS} AS trackers FROM geofence_pending
           WHERE ${AVAILABLE}
             AND (began_at <= coalesce(${OLDEST_INGEST_IN_FLIGHT}, 'infinity') OR marked_at < now() - make_interval(secs => ${IN_FLIGHT_WAIT_MS / 1000}))
           ORDER BY marked_at, id`,
    );
  }

  /** The available rows of one tracker's own marks (after `explode`, all of its marks). */
  async rowsOf(trackerId: number): Promise<QueueRow[]> {
    return this.db.rows<QueueRow>(
      sql`SELECT id::text AS id, ARRAY[tracker_id] AS trackers FROM geofence_pending WHERE tracker_id = ${trackerId} AND ${AVAILABLE}`,
    );
  }

  /** Locks the rows no other pass holds (a pass's first step); answers their ids. */
  async claim(rowIds: readonly string[]): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      sql`SELECT id::text AS id FROM geofence_pending WHERE id = ANY(${rowIds}::bigint[]) AND ${AVAILABLE} ORDER BY id FOR UPDATE SKIP LOCKED`,
    );
    return rows.map((r) => r.id);
  }

  /** The marks of claimed rows, merged per tracker. */
  marks(rowIds: readonly string[]): Promise<TakenMarks[]> {
    return this.db.rows<TakenMarks>(
      sql`SELECT u.tracker_id, min(g.marked_at) AS marked_at,
                 CASE WHEN bool_and(g.claimed_until IS NULL) AND isfinite(min(u.from_ts)) THEN (extract(epoch FROM min(u.from_ts)) * 1000000)::bigint::text END AS from_us
            FROM geofence_pending g CROSS JOIN LATERAL unnest(${TRACKERS}, coalesce(g.froms, ARRAY[g.from_ts])) AS u(tracker_id, from_ts)
           WHERE g.id = ANY(${rowIds}::bigint[])
           GROUP BY u.tracker_id`,
    );
  }

  /**
   * Deletes claimed rows, in the transaction of the replay that took them into account. What they
   * mark for `kept` trackers (those the pass could not lock: another transaction holds them) is
   * written back, one row per tracker and deleted row, with the same times and claim, so they
   * wait for a later pass exactly as they waited for this one. Marks of trackers that no longer
   * exist are not written back.
   */
  async settle(rowIds: readonly string[], kept: readonly number[]): Promise<void> {
    await this.db.execute(
      sql`WITH gone AS (DELETE FROM geofence_pending WHERE id = ANY(${rowIds}::bigint[]) RETURNING tracker_id, from_ts, trackers, froms, marked_at, began_at, claimed_until)
          INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, began_at, claimed_until)
          SELECT u.tracker_id, u.from_ts, g.marked_at, g.began_at, g.claimed_until
            FROM gone g CROSS JOIN LATERAL unnest(coalesce(g.trackers, ARRAY[g.tracker_id]), coalesce(g.froms, ARRAY[g.from_ts])) AS u(tracker_id, from_ts)
           WHERE u.tracker_id = ANY(${kept}::int[]) AND EXISTS (SELECT 1 FROM trackers t WHERE t.id = u.tracker_id)`,
    );
  }

  /**
   * Rewrites the available rows that name several trackers as one row per tracker, so that each
   * tracker's marks can be taken (and held back) alone: the worker's way of isolating a tracker
   * whose replay fails. Its own transaction; waits for a pass that holds some of the rows.
   */
  async explode(): Promise<void> {
    await this.db.execute(
      sql`WITH gone AS (DELETE FROM geofence_pending WHERE trackers IS NOT NULL AND ${AVAILABLE} RETURNING trackers, froms, marked_at, began_at, claimed_until)
          INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, began_at, claimed_until)
          SELECT u.tracker_id, u.from_ts, g.marked_at, g.began_at, g.claimed_until FROM gone g CROSS JOIN LATERAL unnest(g.trackers, g.froms) AS u(tracker_id, from_ts)`,
    );
  }

  /** Up to `limit` trackers of one-tracker rows, the longest waiting first (after `explode`). */
  async singles(limit: number): Promise<number[]> {
    const rows = await this.db.rows<{ tracker_id: number }>(
      sql`SELECT tracker_id FROM geofence_pending WHERE tracker_id IS NOT NULL AND ${AVAILABLE} GROUP BY tracker_id ORDER BY min(marked_at), tracker_id LIMIT ${limit}`,
    );
    return rows.map((r) => r.tracker_id);
  }

  /** Holds a tracker's own marks back for RETRY_SECONDS after its replay failed. */
  async holdBack(trackerId: number): Promise<void> {
    await this.db.execute(
      sql`UPDATE geofence_pending SET claimed_until = now() + make_interval(secs => ${RETRY_SECONDS}) WHERE tracker_id = ${trackerId}`,
    );
  }

  /**
   * Reclaims the space of deleted marks. Autovacuum would, but at most once per naptime; the queue
   * turns over a row per write, so the worker asks after busy passes. SKIP_LOCKED: another
   * instance vacuuming it already is enough. No truncation: giving back the empty tail needs an
   * exclusive lock that every ingest batch's insert conflicts with, and would stall the pass.
   */
  async vacuum(): Promise<void> {
    await this.db.execute(sql`VACUUM (SKIP_LOCKED, TRUNCATE false) geofence_pending`);
  }
}

/**
 * The rows a pass takes: the longest waiting first, as long as the trackers they name together
 * stay within `limit` (at least one row). Rows of later writes mostly name the same trackers, so a
 * pass usually takes the whole queue.
 */
export function pickRows(rows: readonly QueueRow[], limit: number): string[] {
  const trackers = new Set<number>();
  const picked: string[] = [];
  for (const row of rows) {
    const added = row.trackers.filter((id) => !trackers.has(id));
    if (picked.length > 0 && trackers.size + added.length > limit) break;
    for (const id of added) trackers.add(id);
    picked.push(row.id);
  }
  return picked;
}
