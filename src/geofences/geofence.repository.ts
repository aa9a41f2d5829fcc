import { Injectable } from '@nestjs/common';
import { Db, raw, sql, type Sql } from '../infrastructure/database/db.js';
import type { AutomaticEntry, Geofence, ManualEntry, ReplayReport, Visit } from './geofence-replay.js';
import { EXIT_FACTOR } from './geofence-replay.js';
import { GeofenceResumeRepository, type Progress } from './geofence-resume.repository.js';

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
  /** The last report of `reports` (null when there are none). */
  last: Progress | null;
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
  constructor(
    private readonly db: Db,
    private readonly writes: GeofenceResumeRepository,
  ) {}

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

  /**
   * The replay's input: every eligible report and manual entry, or with `after` only those after
   * that report (reports by (timestamp, id), manual entries by a later timestamp).
   */
  async loadInput(trackerId: number, defaultDwellMinutes: number, after?: Progress): Promise<Omit<TrackerReplayInput, 'productionRunId'>> {
    const afterTs = after ? sql`timestamptz 'epoch' + ${after.ts}::bigint * interval '1 microsecond'` : null;
    const fences = (table: string, kind: 's' | 'd') => sql`
      SELECT jsonb_build_array(${kind}::text, l.id, l.latitude, l.longitude, l.radius_m, l.dwell_minutes) AS f,
             2 * 6371008.8 * asin(least(1, sqrt(sin(radians(l.latitude - r.latitude) / 2) ^ 2
               + cos(radians(r.latitude)) * cos(radians(l.latitude)) * sin(radians(l.longitude - r.longitude) / 2) ^ 2))) AS d,
             l.radius_m
        FROM ${raw(table)} l
       WHERE l.latitude BETWEEN r.latitude - band.deg AND r.latitude + band.deg AND l.longitude IS NOT NULL`;
    const reports = await this.db.rows<{ id: string; ts: string; latitude: number; longitude: number; accuracy_m: number | null; fences: FenceJson[] | null }>(
      sql`WITH band AS (
            SELECT ${REACH_FACTOR}::float8 * greatest(
                     (SELECT max(radius_m) FROM storage_locations WHERE latitude IS NOT NULL AND longitude IS NOT NULL),
                     (SELECT max(radius_m) FROM delivery_locations WHERE latitude IS NOT NULL AND longitude IS NOT NULL), 0) / ${METRES_PER_DEGREE}::float8 AS deg
          )
          SELECT r.id::text AS id, ${micros('r.timestamp')} AS ts, r.latitude, r.longitude, r.accuracy_m, c.fences
            FROM location_reports r CROSS JOIN band
            LEFT JOIN LATERAL (
              SELECT jsonb_agg(x.f) AS fences
                FROM (${fences('storage_locations', 's')} UNION ALL ${fences('delivery_locations', 'd')}) x
               WHERE x.d <= x.radius_m * ${REACH_FACTOR}::float8 + 1
            ) c ON band.deg > 0
           WHERE r.tracker_id = ${trackerId} AND r.eligible${afterTs ? sql` AND (r.timestamp, r.id) > (${afterTs}, ${after!.reportId}::bigint)` : raw('')}
           ORDER BY r.timestamp, r.id`,
    );
    const entries = await this.db.rows<{ ts: string; status: ManualEntry['status']; storage_location_id: number | null; source: string; delivery_location_id: number | null }>(
      sql`SELECT ${micros('timestamp')} AS ts, status, storage_location_id, delivery_location_id, source
            FROM tracker_status_history WHERE tracker_id = ${trackerId}${afterTs ? sql` AND timestamp > ${afterTs}` : raw('')} ORDER BY timestamp, id`,
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
      last: reports.length > 0 ? { ts: reports[reports.length - 1].ts, reportId: reports[reports.length - 1].id } : null,
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
    await this.writes.insertVisits(trackerId, visits);
    if (!entriesChanged) return before;
    await this.db.execute(sql`DELETE FROM tracker_status_history WHERE tracker_id = ${trackerId} AND source = 'geofence'`);
    await this.writes.insertEntries(trackerId, entries);
    await this.syncTracker(trackerId);
    return before;
  }

  /** The latest (timestamp, id) entry is the tracker's state; an automatic delivery gives a tracker without destination its location. */
  async syncTracker(trackerId: number): Promise<void> {
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
  }
}

/** Comparable text of a list of automatic entries (both sides list them in time order). */
export function signature(entries: AutomaticEntry[]): string {
  return JSON.stringify(entries.map((e) => [e.status, e.timestamp, e.storageLocationId, e.deliveryLocationId]));
}
