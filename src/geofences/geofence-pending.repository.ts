import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';

export interface PendingClaim {
  tracker_id: number;
  seq: string;
  marked_at: Date;
  /** Earliest affected report/entry time in epoch microseconds (null: replay everything). */
  from_us: string | null;
}

/** How long a claim keeps other workers off a tracker; a crashed worker's claim lapses after it. */
export const CLAIM_SECONDS = 30;

/** The queue of trackers waiting for a geofence replay (geofence_pending). */
@Injectable()
export class GeofencePendingRepository {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `limit` unclaimed (or lapsed) marks, oldest first. SKIP LOCKED: instances that
   * claim at the same time take different trackers; the claim commits at once, so no row lock is
   * held while the replay runs and ingest never waits for it.
   */
  claim(limit: number): Promise<PendingClaim[]> {
    return this.db.rows<PendingClaim>(
      sql`UPDATE geofence_pending g SET claimed_until = now() + make_interval(secs => ${CLAIM_SECONDS})
           WHERE g.tracker_id IN (SELECT p.tracker_id FROM geofence_pending p
                                   WHERE p.claimed_until IS NULL OR p.claimed_until < now()
                                   ORDER BY p.marked_at, p.tracker_id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING g.tracker_id, g.seq::text AS seq, g.marked_at,
                    CASE WHEN isfinite(g.from_ts) THEN (extract(epoch FROM g.from_ts) * 1000000)::bigint::text END AS from_us`,
    );
  }

  /** Done: the mark goes unless it was bumped meanwhile (then it is released for the next pass). */
  async finish(claim: PendingClaim): Promise<void> {
    const deleted = await this.db.execute(sql`DELETE FROM geofence_pending WHERE tracker_id = ${claim.tracker_id} AND seq = ${claim.seq}::bigint`);
    if (deleted === 0) await this.release(claim.tracker_id);
  }

  async release(trackerId: number): Promise<void> {
    await this.db.execute(sql`UPDATE geofence_pending SET claimed_until = NULL, marked_at = now() WHERE tracker_id = ${trackerId}`);
  }

  /** Marks trackers for a full replay (rebuild). */
  async markAll(trackerIds: readonly number[]): Promise<void> {
    await this.db.execute(
      sql`INSERT INTO geofence_pending AS g (tracker_id, from_ts)
          SELECT t.id, '-infinity'::timestamptz FROM trackers t WHERE t.id = ANY(${trackerIds}::int[]) ORDER BY t.id
          ON CONFLICT (tracker_id) DO UPDATE SET from_ts = EXCLUDED.from_ts, seq = g.seq + 1`,
    );
  }

  /** Age in seconds of the oldest waiting mark (0 when none waits). */
  async oldestWaitSeconds(): Promise<number> {
    const row = await this.db.one<{ age: number }>(sql`SELECT coalesce(extract(epoch FROM now() - min(marked_at)), 0)::float8 AS age FROM geofence_pending`);
    return row.age;
  }
}
