import { Injectable } from '@nestjs/common';
import { Db, raw, sql, type Sql } from '../infrastructure/database/db.js';
import type { AutomaticEntry, Geofence, ManualEntry, ReplayReport, Visit } from './geofence-replay.js';
import { EXIT_FACTOR } from './geofence-replay.js';

/** Metres per degree of latitude on the replay's sphere (slightly rounded down: a wider band). */
const METRES_PER_DEGREE = 111_000;
/** Widest reach of a geofence: a report is "not outside" within EXIT_FACTOR × radius plus an accuracy of at most the radius. */
const REACH_FACTOR = EXIT_FACTOR + 1;

/** Microseconds since the epoch, exact (a bigint as text; it fits a double below 2^53). */
const micros = (column: string): Sql => raw(`(extract(epoch FROM ${column}) * 1000000)::bigint::text`);

export interface TrackerReplayInput {
  productionRunId: number;
  reports: ReplayReport[];
  manual: ManualEntry[];
  /** The automatic entries stored now, as a comparable signature, and how many. */
  storedAutomatic: string;
  storedAutomaticCount: number;
}

type FenceJson = [type: 's' | 'd', id: number, latitude: number, longitude: number, radius: number, dwell: number | null];

/**
 * SQL of the geofence replay: its inputs for one tracker in two statements (whatever the number of
 * reports), and its result written set-based.
 *
 * Candidate locations of a report come from a latitude band (the locations' (latitude, longitude)
 * index) as wide as the reach of the largest geofence, narrowed by the same distance formula; the
 * replay then judges each candidate exactly.
 */
@Injectable()
export class GeofenceRepository {
  constructor(private readonly db: Db) {}

  /** Locks the tracker row (manual entries take the same lock); null when it is gone. */
  async lockTracker(trackerId: number): Promise<{ production_run_id: number } | null> {
    return this.db.first<{ production_run_id: number }>(sql`SELECT production_run_id FROM trackers WHERE id = ${trackerId} FOR UPDATE`);
  }

  /** Every tracker id ascending, or just `trackerId` when it exists. */
  async trackerIds(trackerId?: number): Promise<number[]> {
    const rows = await this.db.rows<{ id: number }>(
      trackerId === undefined ? sql`SELECT id FROM trackers ORDER BY id` : sql`SELECT id FROM trackers WHERE id = ${trackerId}`,
    );
    return rows.map((r) => r.id);
  }

  async loadInput(trackerId: number, defaultDwellMinutes: number): Promise<Omit<TrackerReplayInput, 'productionRunId'>> {
    const fences = (table: string, kind: 's' | 'd') => sql`
      SELECT jsonb_build_array(${kind}::text, l.id, l.latitude, l.longitude, l.radius_m, l.dwell_minutes) AS f,
             2 * 6371008.8 * asin(least(1, sqrt(sin(radians(l.latitude - r.latitude) / 2) ^ 2
               + cos(radians(r.latitude)) * cos(radians(l.latitude)) * sin(radians(l.longitude - r.longitude) / 2) ^ 2))) AS d,
             l.radius_m
        FROM ${raw(table)} l
       WHERE l.latitude BETWEEN r.latitude - band.deg AND r.latitude + band.deg AND l.longitude IS NOT NULL`;
    const reports = await this.db.rows<{ ts: string; latitude: number; longitude: number; accuracy_m: number | null; fences: FenceJson[] | null }>(
      sql`WITH band AS (
            SELECT ${REACH_FACTOR}::float8 * greatest(
                     (SELECT max(radius_m) FROM storage_locations WHERE latitude IS NOT NULL AND longitude IS NOT NULL),
                     (SELECT max(radius_m) FROM delivery_locations WHERE latitude IS NOT NULL AND longitude IS NOT NULL), 0) / ${METRES_PER_DEGREE}::float8 AS deg
          )
          SELECT ${micros('r.timestamp')} AS ts, r.latitude, r.longitude, r.accuracy_m, c.fences
            FROM location_reports r CROSS JOIN band
            LEFT JOIN LATERAL (
              SELECT jsonb_agg(x.f) AS fences
                FROM (${fences('storage_locations', 's')} UNION ALL ${fences('delivery_locations', 'd')}) x
               WHERE x.d <= x.radius_m * ${REACH_FACTOR}::float8 + 1
            ) c ON band.deg > 0
           WHERE r.tracker_id = ${trackerId} AND r.eligible
           ORDER BY r.timestamp, r.id`,
    );
    const entries = await this.db.rows<{ ts: string; status: ManualEntry['status']; storage_location_id: number | null; source: string; delivery_location_id: number | null }>(
      sql`SELECT ${micros('timestamp')} AS ts, status, storage_location_id, delivery_location_id, source
            FROM tracker_status_history WHERE tracker_id = ${trackerId} ORDER BY timestamp, id`,
    );
    const toFence = ([kind, id, latitude, longitude, radius, dwell]: FenceJson): Geofence => ({
      type: kind === 's' ? 'storage' : 'delivery',
      id,
      latitude,
      longitude,
      radiusM: radius,
      dwellMinutes: dwell ?? defaultDwellMinutes,
    });
    const automatic = entries
      .filter((e) => e.source === 'geofence')
      .map((e) => ({ status: e.status, timestamp: Number(e.ts), storageLocationId: e.storage_location_id, deliveryLocationId: e.delivery_location_id }));
    return {
      reports: reports.map((r) => ({
        timestamp: Number(r.ts),
        latitude: r.latitude,
        longitude: r.longitude,
        accuracyM: r.accuracy_m,
        candidates: (r.fences ?? []).map(toFence),
      })),
      manual: entries.filter((e) => e.source !== 'geofence').map((e) => ({ timestamp: Number(e.ts), status: e.status, storageLocationId: e.storage_location_id })),
      storedAutomatic: signature(automatic),
      storedAutomaticCount: automatic.length,
    };
  }

  /**
   * Replaces the tracker's visits and, when they changed, its automatic entries; then moves the
   * tracker to its latest entry. Returns how many visits (and confirmed ones) there were before.
   */
  async writeResult(trackerId: number, visits: Visit[], entries: AutomaticEntry[], entriesChanged: boolean): Promise<{ visits: number; confirmed: number }> {
    const [before] = await this.db.rows<{ visits: number; confirmed: number }>(
      sql`WITH gone AS (DELETE FROM geofence_visits WHERE tracker_id = ${trackerId} RETURNING confirmed)
          SELECT count(*)::int AS visits, count(*) FILTER (WHERE confirmed)::int AS confirmed FROM gone`,
    );
    if (visits.length > 0) {
      const col = <T>(pick: (v: Visit) => T) => visits.map(pick);
      const at = (column: string) => raw(`timestamptz 'epoch' + u.${column} * interval '1 microsecond'`);
      await this.db.execute(
        sql`INSERT INTO geofence_visits (tracker_id, storage_location_id, delivery_location_id, entered_at, last_seen_at, exited_at, report_count, confirmed)
            SELECT ${trackerId}::int, u.s, u.d, ${at('e')}, ${at('l')}, ${at('x')}, u.n, u.c
              FROM unnest(${col((v) => (v.type === 'storage' ? v.locationId : null))}::int[], ${col((v) => (v.type === 'delivery' ? v.locationId : null))}::int[],
                          ${col((v) => String(v.enteredAt))}::bigint[], ${col((v) => String(v.lastSeenAt))}::bigint[],
                          ${col((v) => (v.exitedAt === null ? null : String(v.exitedAt)))}::bigint[], ${col((v) => v.reportCount)}::int[],
                          ${col((v) => v.confirmed)}::boolean[]) WITH ORDINALITY AS u(s, d, e, l, x, n, c, ord)
             ORDER BY u.ord`,
      );
    }
    if (!entriesChanged) return before;
    await this.db.execute(sql`DELETE FROM tracker_status_history WHERE tracker_id = ${trackerId} AND source = 'geofence'`);
    if (entries.length > 0) {
      const col = <T>(pick: (e: AutomaticEntry) => T) => entries.map(pick);
      await this.db.execute(
        sql`INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by, source)
            SELECT ${trackerId}::int, u.status, timestamptz 'epoch' + u.ts * interval '1 microsecond', u.s, u.d, NULL, NULL, 'geofence'
              FROM unnest(${col((e) => e.status)}::text[], ${col((e) => String(e.timestamp))}::bigint[], ${col((e) => e.storageLocationId)}::int[],
                          ${col((e) => e.deliveryLocationId)}::int[]) WITH ORDINALITY AS u(status, ts, s, d, ord)
             ORDER BY u.ord`,
      );
    }
    // The latest (timestamp, id) entry is the tracker's state; an automatic delivery gives a
    // tracker without destination its location.
    await this.db.execute(
      sql`UPDATE trackers t
             SET status = l.status,
                 storage_location_id = CASE WHEN l.status = 'IN_STORAGE' THEN l.storage_location_id END,
                 delivery_location_id = COALESCE(t.delivery_location_id,
                   (SELECT h.delivery_location_id FROM tracker_status_history h
                     WHERE h.tracker_id = t.id AND h.source = 'geofence' AND h.status = 'DELIVERED' ORDER BY h.timestamp, h.id LIMIT 1)),
                 updated_at = now()
            FROM (SELECT h.status, h.storage_location_id FROM tracker_status_history h
                   WHERE h.tracker_id = ${trackerId} ORDER BY h.timestamp DESC, h.id DESC LIMIT 1) l
           WHERE t.id = ${trackerId}`,
    );
    return before;
  }
}

/** Comparable text of a list of automatic entries (both sides list them in time order). */
export function signature(entries: AutomaticEntry[]): string {
  return JSON.stringify(entries.map((e) => [e.status, e.timestamp, e.storageLocationId, e.deliveryLocationId]));
}
