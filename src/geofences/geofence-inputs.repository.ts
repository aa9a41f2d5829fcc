import { Injectable } from '@nestjs/common';
import { Db, raw, sql, type Sql } from '../infrastructure/database/db.js';
import { booleanArray, intArray, nullableBigintArray } from '../infrastructure/database/pg-arrays.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';

/** Microseconds since the epoch, exact (a bigint as text; it fits a double below 2^53). */
const micros = (column: string): Sql => raw(`(extract(epoch FROM ${column}) * 1000000)::bigint::text`);
/** A timestamptz from microseconds since the epoch; NULL → -infinity. */
export const fromMicros = (column: string): Sql =>
  raw(`coalesce(timestamptz 'epoch' + ${column} * interval '1 microsecond', '-infinity')`);

/** A stored visit as [id, storage id, delivery id, entered µs, last seen µs, exited µs, report count, confirmed]. */
export type VisitJson = [string, number | null, number | null, string, string, string | null, number, boolean];

export interface StartRow {
  tracker_id: number;
  /** The last report the previous replay took into account (null: none). */
  last_us: string | null;
  last_report_id: string | null;
  /** Whether the marked time lies after that report: the replay simply goes on from it. */
  resume: boolean;
  /** The tracker's latest visit (the open one when it has not exited). */
  latest: VisitJson | null;
  /** Not resuming: entered_at of the latest visit entered at or before the marked time. */
  cut_us: string | null;
  /** The visit before that one. */
  before: VisitJson | null;
}

/** A report as the replay reads it; `id` and `ts` (epoch µs) are exact as doubles (below 2^53). */
export interface ReportRow {
  tracker_id: number;
  id: number;
  ts: number;
  latitude: number;
  longitude: number;
  accuracy_m: number | null;
}

export interface EntryRow {
  tracker_id: number;
  /** 'after': an entry at or after the cut, in (timestamp, id) order; 'state': the state before the cut. */
  kind: 'after' | 'state';
  ts: string | null;
  status: TrackerStatus | null;
  storage_location_id: number | null;
  delivery_location_id: number | null;
  source: string | null;
  /** On the 'state' row: the latest manual entry before the cut (µs), if any. */
  manual_us: string | null;
}

export interface LocationRow {
  kind: 's' | 'd';
  id: number;
  latitude: number | null;
  longitude: number | null;
  radius_m: number;
  dwell_minutes: number | null;
}

const visitJson = (alias: string): Sql =>
  raw(`json_build_array(${alias}.id::text, ${alias}.storage_location_id, ${alias}.delivery_location_id,
         (extract(epoch FROM ${alias}.entered_at) * 1000000)::bigint::text, (extract(epoch FROM ${alias}.last_seen_at) * 1000000)::bigint::text,
         (extract(epoch FROM ${alias}.exited_at) * 1000000)::bigint::text, ${alias}.report_count, ${alias}.confirmed)`);

/**
 * The reads of a geofence replay pass, each one statement for every tracker of the pass (whatever
 * their number): where each tracker's replay starts, the state there, the reports and entries
 * after it, and the locations.
 */
@Injectable()
export class GeofenceInputsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Locks the trackers (in id order; manual entries and deletes take the same lock); answers the
   * ones that exist. `skipLocked`: leaves out those another transaction holds instead of waiting.
   */
  lockTrackers(ids: readonly number[], skipLocked = false): Promise<{ id: number; production_run_id: number }[]> {
    return this.db.rows(
      sql`SELECT id, production_run_id FROM trackers WHERE id = ANY(${ids}::int[]) ORDER BY id FOR UPDATE${skipLocked ? raw(' SKIP LOCKED') : raw('')}`,
    );
  }

  /**
   * Where each tracker's replay can start. `fromUs` per tracker: the earliest time its marks cover
   * (null: from the beginning). Resuming needs that time to lie after the last report already
   * taken into account; otherwise the replay rewinds to the start of the latest visit entered at or
   * before it — a point whose state the stored visits and entries describe exactly — or, when no
   * visit was entered by then and the tracker was replayed past that time, to that time itself: no
   * visit is open there, and the entries before it are the whole state (a tracker that has not
   * entered a location is not replayed from its first report for every late one). A tracker never
   * replayed starts from its first report: its earlier reports may never have been taken into
   * account (stored while geofencing was off, or loaded directly).
   */
  starts(ids: readonly number[], fromUs: readonly (string | null)[]): Promise<StartRow[]> {
    return this.db.rows<StartRow>(
      sql`WITH p AS (
            SELECT c.tracker_id, ${fromMicros('c.f_us')} AS f, c.f_us IS NULL AS everything, g.last_ts, g.last_report_id
              FROM unnest(${intArray(ids)}, ${nullableBigintArray(fromUs)}) AS c(tracker_id, f_us)
              LEFT JOIN geofence_progress g ON g.tracker_id = c.tracker_id
          )
          SELECT p.tracker_id, ${micros('p.last_ts')} AS last_us, p.last_report_id::text AS last_report_id,
                 coalesce(NOT p.everything AND p.f > p.last_ts, false) AS resume,
                 l.v AS latest, ${micros('coalesce(t.entered_at, CASE WHEN NOT p.everything AND p.last_ts IS NOT NULL AND p.f <= p.last_ts THEN p.f END)')} AS cut_us, w.v AS before
            FROM p
            LEFT JOIN LATERAL (SELECT ${visitJson('v')} AS v FROM geofence_visits v WHERE v.tracker_id = p.tracker_id
                                ORDER BY v.entered_at DESC, v.id DESC LIMIT 1) l ON true
            LEFT JOIN LATERAL (SELECT v.entered_at FROM geofence_visits v
                                WHERE NOT p.everything AND NOT coalesce(p.f > p.last_ts, false) AND v.tracker_id = p.tracker_id AND v.entered_at <= p.f
                                ORDER BY v.entered_at DESC, v.id DESC LIMIT 1) t ON true
            LEFT JOIN LATERAL (SELECT ${visitJson('v')} AS v FROM geofence_visits v WHERE v.tracker_id = p.tracker_id AND v.entered_at < t.entered_at
                                ORDER BY v.entered_at DESC, v.id DESC LIMIT 1) w ON true`,
    );
  }

  /**
   * Per tracker, the entries at or after its cut (`inclusive`: only after it) and, as one 'state'
   * row, the current status before the cut (a manual entry before an automatic one of the same
   * time, as the replay takes them) and the latest manual entry's time. A null cut: every entry.
   */
  entries(
    ids: readonly number[],
    cutUs: readonly (string | null)[],
    inclusive: readonly boolean[],
  ): Promise<EntryRow[]> {
    return this.db.rows<EntryRow>(
      sql`WITH k AS (
            SELECT c.tracker_id, ${fromMicros('c.cut_us')} AS cut, c.incl FROM unnest(${intArray(ids)}, ${nullableBigintArray(cutUs)}, ${booleanArray(inclusive)}) AS c(tracker_id, cut_us, incl)
          )
          SELECT k.tracker_id, 'after' AS kind, ${micros('h.timestamp')} AS ts, h.status, h.storage_location_id, h.delivery_location_id, h.source, NULL AS manual_us
            FROM k JOIN LATERAL (SELECT h.* FROM tracker_status_history h WHERE h.tracker_id = k.tracker_id AND h.timestamp >= k.cut AND (h.timestamp > k.cut OR NOT k.incl)
                                  ORDER BY h.timestamp, h.id) h ON true
          UNION ALL
          SELECT k.tracker_id, 'state', NULL, s.status, s.storage_location_id, NULL, NULL, ${micros('m.ts')}
            FROM k
            LEFT JOIN LATERAL (SELECT h.status, h.storage_location_id FROM tracker_status_history h
                                WHERE h.tracker_id = k.tracker_id AND h.timestamp <= k.cut AND (h.timestamp < k.cut OR k.incl)
                                ORDER BY h.timestamp DESC, (h.source = 'geofence') DESC, h.id DESC LIMIT 1) s ON true
            LEFT JOIN LATERAL (SELECT max(h.timestamp) AS ts FROM tracker_status_history h
                                WHERE h.tracker_id = k.tracker_id AND h.source <> 'geofence' AND h.timestamp <= k.cut AND (h.timestamp < k.cut OR k.incl)) m ON true
           WHERE k.cut > '-infinity'`,
    );
  }

  /**
   * Each tracker's eligible reports after (lowUs, lowId) in (timestamp, id) order (a null lowUs:
   * all of them). Rows of different trackers come interleaved; each tracker's come in order.
   */
  reports(ids: readonly number[], lowUs: readonly (string | null)[], lowId: readonly string[]): Promise<ReportRow[]> {
    return this.db.rows<ReportRow>(
      sql`SELECT b.tracker_id, r.id::float8 AS id, ${micros('r.timestamp')}::float8 AS ts, r.latitude, r.longitude, r.accuracy_m
            FROM unnest(${intArray(ids)}, ${nullableBigintArray(lowUs)}, ${nullableBigintArray(lowId)}) AS b(tracker_id, low_us, low_id)
            CROSS JOIN LATERAL (
              SELECT r.id, r.timestamp, r.latitude, r.longitude, r.accuracy_m FROM location_reports r
               WHERE r.tracker_id = b.tracker_id AND r.eligible AND r.timestamp >= ${fromMicros('b.low_us')}
                 AND (r.timestamp, r.id) > (${fromMicros('b.low_us')}, b.low_id)
               ORDER BY r.timestamp, r.id OFFSET 0) r`,
    );
  }

  /** Every storage and delivery location (the grid takes those with coordinates; dwell is needed for all). */
  locations(): Promise<LocationRow[]> {
    return this.db.rows<LocationRow>(
      sql`SELECT 's' AS kind, id, latitude, longitude, radius_m, dwell_minutes FROM storage_locations
          UNION ALL SELECT 'd', id, latitude, longitude, radius_m, dwell_minutes FROM delivery_locations`,
    );
  }
}
