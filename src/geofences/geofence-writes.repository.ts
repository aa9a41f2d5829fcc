import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';
import {
  bigintArray,
  booleanArray,
  intArray,
  nullableBigintArray,
  nullableIntArray,
  nullableTextArrayParam,
} from '../infrastructure/database/pg-arrays.js';
import type { AutomaticEntry, Visit } from './geofence-replay.js';
import { fromMicros } from './geofence-inputs.repository.js';

/** A visit of a replay's result with the tracker it belongs to. */
export interface TrackerVisit {
  trackerId: number;
  visit: Visit;
}

export interface TrackerEntry {
  trackerId: number;
  entry: AutomaticEntry;
}

/** Where a tracker's replay stopped: its last report (null: it has none). */
export interface TrackerProgress {
  trackerId: number;
  ts: string | null;
  reportId: string | null;
}

/**
 * The writes of a geofence replay pass: one statement per table for every tracker of the pass.
 * Every tracker written here is locked by the pass (GeofenceInputsRepository.lockTrackers).
 */
@Injectable()
export class GeofenceWritesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Drops the visits entered at or after each tracker's cut (null: all of them), and with
   * `entries` its automatic entries from the cut on; answers the dropped visits per tracker.
   */
  async dropFrom(
    cuts: readonly { trackerId: number; cutUs: string | null; entries: boolean }[],
  ): Promise<Map<number, { visits: number; confirmed: number }>> {
    const dropped = new Map<number, { visits: number; confirmed: number }>();
    if (cuts.length === 0) return dropped;
    const rows = await this.db.rows<{ tracker_id: number; visits: number; confirmed: number }>(
      sql`WITH d AS (SELECT * FROM unnest(${intArray(cuts.map((c) => c.trackerId))}, ${nullableBigintArray(cuts.map((c) => c.cutUs))}) AS d(tracker_id, cut_us)),
          gone AS (DELETE FROM geofence_visits v USING d WHERE v.tracker_id = d.tracker_id AND v.entered_at >= ${fromMicros('d.cut_us')} RETURNING v.tracker_id, v.confirmed)
          SELECT tracker_id, count(*)::int AS visits, count(*) FILTER (WHERE confirmed)::int AS confirmed FROM gone GROUP BY tracker_id`,
    );
    for (const r of rows) dropped.set(r.tracker_id, { visits: r.visits, confirmed: r.confirmed });
    const withEntries = cuts.filter((c) => c.entries);
    if (withEntries.length > 0) {
      await this.db.execute(
        sql`DELETE FROM tracker_status_history h
             USING unnest(${intArray(withEntries.map((c) => c.trackerId))}, ${nullableBigintArray(withEntries.map((c) => c.cutUs))}) AS d(tracker_id, cut_us)
             WHERE h.tracker_id = d.tracker_id AND h.source = 'geofence' AND h.timestamp >= ${fromMicros('d.cut_us')}`,
      );
    }
    return dropped;
  }

  /** Visits a replay continued (stored ones, with their id): their new last sighting, exit, count, confirmation. */
  async updateVisits(visits: readonly Visit[]): Promise<void> {
    if (visits.length === 0) return;
    await this.db.execute(
      sql`UPDATE geofence_visits v
             SET last_seen_at = timestamptz 'epoch' + u.l * interval '1 microsecond',
                 exited_at = timestamptz 'epoch' + u.x * interval '1 microsecond',
                 report_count = u.n, confirmed = u.c
            FROM unnest(${nullableBigintArray(visits.map((v) => v.id ?? null))}, ${bigintArray(visits.map((v) => v.lastSeenAt))},
                        ${nullableBigintArray(visits.map((v) => v.exitedAt))}, ${intArray(visits.map((v) => v.reportCount))},
                        ${booleanArray(visits.map((v) => v.confirmed))}) AS u(id, l, x, n, c)
           WHERE v.id = u.id`,
    );
  }

  /**
   * Inserts visits. Their locations are locked FOR KEY SHARE first, in one statement (visits carry
   * no per-row foreign keys): a location cannot be deleted while visits naming it go in, and one
   * deleted since the pass read the locations fails the pass, which is then retried.
   */
  async insertVisits(rows: readonly TrackerVisit[]): Promise<void> {
    if (rows.length === 0) return;
    const used = (type: Visit['type']) => [
      ...new Set(rows.filter((r) => r.visit.type === type).map((r) => r.visit.locationId)),
    ];
    const [storage, delivery] = [used('storage'), used('delivery')];
    const locked = await this.db.one<{ n: number }>(
      sql`SELECT (SELECT count(*) FROM (SELECT 1 FROM storage_locations WHERE id = ANY(${storage}::int[]) ORDER BY id FOR KEY SHARE) s)
               + (SELECT count(*) FROM (SELECT 1 FROM delivery_locations WHERE id = ANY(${delivery}::int[]) ORDER BY id FOR KEY SHARE) d) AS n`,
    );
    if (Number(locked.n) !== storage.length + delivery.length)
      throw new Error('a location was deleted during the geofence pass');
    const col = <T>(pick: (v: Visit) => T) => rows.map((r) => pick(r.visit));
    await this.db.execute(
      sql`INSERT INTO geofence_visits (tracker_id, storage_location_id, delivery_location_id, entered_at, last_seen_at, exited_at, report_count, confirmed)
          SELECT u.t, u.s, u.d, timestamptz 'epoch' + u.e * interval '1 microsecond', timestamptz 'epoch' + u.l * interval '1 microsecond',
                 timestamptz 'epoch' + u.x * interval '1 microsecond', u.n, u.c
            FROM unnest(${intArray(rows.map((r) => r.trackerId))}, ${nullableIntArray(col((v) => (v.type === 'storage' ? v.locationId : null)))},
                        ${nullableIntArray(col((v) => (v.type === 'delivery' ? v.locationId : null)))}, ${bigintArray(col((v) => v.enteredAt))},
                        ${bigintArray(col((v) => v.lastSeenAt))}, ${nullableBigintArray(col((v) => v.exitedAt))}, ${intArray(col((v) => v.reportCount))},
                        ${booleanArray(col((v) => v.confirmed))}) WITH ORDINALITY AS u(t, s, d, e, l, x, n, c, ord)
           ORDER BY u.ord`,
    );
  }

  async insertEntries(rows: readonly TrackerEntry[]): Promise<void> {
    if (rows.length === 0) return;
    const col = <T>(pick: (e: AutomaticEntry) => T) => rows.map((r) => pick(r.entry));
    await this.db.execute(
      sql`INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by, source)
          SELECT u.t, u.status, timestamptz 'epoch' + u.ts * interval '1 microsecond', u.s, u.d, NULL, NULL, 'geofence'
            FROM unnest(${intArray(rows.map((r) => r.trackerId))}, ${nullableTextArrayParam(col((e) => e.status))}, ${bigintArray(col((e) => e.timestamp))},
                        ${nullableIntArray(col((e) => e.storageLocationId))}, ${nullableIntArray(col((e) => e.deliveryLocationId))}) WITH ORDINALITY AS u(t, status, ts, s, d, ord)
           ORDER BY u.ord`,
    );
  }

  /**
   * Moves each tracker to its latest (timestamp, id) entry, by the trackers' own rule (the database
   * function trackers_follow_latest_entry, which the trackers feature owns): an automatic delivery
   * that is current gives a tracker without destination its location.
   */
  async syncTrackers(trackerIds: readonly number[]): Promise<void> {
    if (trackerIds.length === 0) return;
    await this.db.execute(sql`SELECT trackers_follow_latest_entry(${intArray(trackerIds)})`);
  }

  /** Records each tracker's last report taken into account (a tracker without reports has no progress). */
  async saveProgress(rows: readonly TrackerProgress[]): Promise<void> {
    const kept = rows.filter((r) => r.ts !== null);
    const none = rows.filter((r) => r.ts === null).map((r) => r.trackerId);
    if (kept.length > 0) {
      await this.db.execute(
        sql`INSERT INTO geofence_progress AS g (tracker_id, last_ts, last_report_id)
            SELECT u.t, timestamptz 'epoch' + u.ts * interval '1 microsecond', u.r
              FROM unnest(${intArray(kept.map((r) => r.trackerId))}, ${nullableBigintArray(kept.map((r) => r.ts))}, ${nullableBigintArray(kept.map((r) => r.reportId))}) AS u(t, ts, r)
             ORDER BY u.t
            ON CONFLICT (tracker_id) DO UPDATE SET last_ts = EXCLUDED.last_ts, last_report_id = EXCLUDED.last_report_id`,
      );
    }
    if (none.length > 0)
      await this.db.execute(sql`DELETE FROM geofence_progress WHERE tracker_id = ANY(${none}::int[])`);
  }
}
