import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';
import { isoUtcSql } from '../common/http/timestamps.js';
import { Db, raw, sql, type Sql } from '../infrastructure/database/db.js';
import { openSnapshotRead } from '../infrastructure/database/snapshot-read.js';
import { latestLocationLateral } from '../location-reports/location-point.js';
import type { StatusMarker, VisitMarker } from './track-formats.js';

/** The window of a track: inclusive bounds, either may be open. */
export interface TrackWindow {
  start: Date | null;
  end: Date | null;
}

/** One eligible report as the cursor hands it over: longitude, latitude, epoch ms, opens/closes a visit. */
export type TrackReportTuple = [number, number, number, boolean];

/** An open track read: markers read, reports streamed in (timestamp, id) order; close() always. */
export interface TrackRead {
  tracker: { id: number; name: string };
  statuses: StatusMarker[];
  visits: VisitMarker[];
  reports(batchSize: number): AsyncGenerator<TrackReportTuple[], void>;
  close(): Promise<void>;
}

export interface RunPositionRow {
  tracker_id: number;
  tracker_name: string;
  status: string;
  latitude: number;
  longitude: number;
  timestamp: string;
  reported_at: string;
  delivery_location_name: string | null;
}

const ts = (expr: string) => raw(isoUtcSql(expr));

/**
 * Statement timeout of a track read. The cursor's rows are one statement however many batches
 * they come in, and a million-report track takes seconds to read (docs/performance.md); the read
 * never waits for the client (the answer is written after it), so this bounds only the database work.
 */
const TRACK_READ_TIMEOUT_MS = 5 * 60_000;

/** A location of either kind by the ids of a row (`alias.storage_location_id`, `alias.delivery_location_id`). */
const LOCATION_JOINS = (alias: string) =>
  raw(`LEFT JOIN storage_locations sl ON sl.id = ${alias}.storage_location_id
       LEFT JOIN delivery_locations dl ON dl.id = ${alias}.delivery_location_id`);
const LOCATION_COLUMNS = raw(`CASE WHEN sl.id IS NOT NULL THEN 'storage' ELSE 'delivery' END AS location_type,
       COALESCE(sl.name, dl.name) AS location_name,
       CASE WHEN sl.id IS NOT NULL THEN sl.latitude ELSE dl.latitude END AS latitude,
       CASE WHEN sl.id IS NOT NULL THEN sl.longitude ELSE dl.longitude END AS longitude`);
const HAS_COORDINATES = raw(`(CASE WHEN sl.id IS NOT NULL THEN sl.latitude IS NOT NULL AND sl.longitude IS NOT NULL
       ELSE dl.latitude IS NOT NULL AND dl.longitude IS NOT NULL END)`);

function inWindow(column: string, window: TrackWindow): Sql {
  return sql`(${window.start}::timestamptz IS NULL OR ${raw(column)} >= ${window.start}::timestamptz)
         AND (${window.end}::timestamptz IS NULL OR ${raw(column)} <= ${window.end}::timestamptz)`;
}

/**
 * SQL of tracks and run positions. A track is read in one REPEATABLE READ snapshot on its own
 * connection (openSnapshotRead): the tracker (scoped), its markers, then its eligible reports from a
 * server-side cursor, so the markers and the points describe the same moment however long the
 * stream takes.
 */
@Injectable()
export class TracksRepository {
  constructor(
    private readonly db: Db,
    private readonly dataSource: DataSource,
  ) {}

  /** Opens the track of a visible tracker; null (nothing left open) when it is missing or invisible. */
  async openTrack(scope: AccessScope, trackerId: number, window: TrackWindow): Promise<TrackRead | null> {
    const read = await openSnapshotRead(this.dataSource, { settings: '', timeoutMs: TRACK_READ_TIMEOUT_MS });
    try {
      const [tracker] = await read.query<{ id: number; name: string }>(
        sql`SELECT t.id, t.name FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
             WHERE t.id = ${trackerId} AND ${scope.visibleClient('pr.client_id')}`,
      );
      if (!tracker) {
        await read.close();
        return null;
      }
      const statuses = await read.query<StatusMarker>(
        sql`SELECT h.status, ${ts('h.timestamp')} AS timestamp, ${LOCATION_COLUMNS}
              FROM tracker_status_history h ${LOCATION_JOINS('h')}
             WHERE h.tracker_id = ${trackerId} AND (sl.id IS NOT NULL OR dl.id IS NOT NULL) AND ${HAS_COORDINATES}
               AND ${inWindow('h.timestamp', window)}
             ORDER BY h.timestamp, h.id`,
      );
      const visits = await read.query<VisitMarker & { entered: Date; exited: Date | null }>(
        sql`SELECT ${LOCATION_COLUMNS}, ${ts('v.entered_at')} AS entered_at, ${ts('v.exited_at')} AS exited_at,
                   v.confirmed, v.entered_at AS entered, v.exited_at AS exited
              FROM geofence_visits v ${LOCATION_JOINS('v')}
             WHERE v.tracker_id = ${trackerId} AND ${HAS_COORDINATES}
               AND (${window.end}::timestamptz IS NULL OR v.entered_at <= ${window.end}::timestamptz)
               AND (${window.start}::timestamptz IS NULL OR v.exited_at IS NULL OR v.exited_at >= ${window.start}::timestamptz)
             ORDER BY v.entered_at, v.id`,
      );
      const boundaries = visits.flatMap((v) => (v.exited ? [v.entered, v.exited] : [v.entered]));
      const reports = sql`SELECT r.longitude, r.latitude, floor(extract(epoch FROM r.timestamp) * 1000)::float8,
                                 r.timestamp = ANY(${boundaries}::timestamptz[])
                            FROM location_reports r
                           WHERE r.tracker_id = ${trackerId} AND r.eligible AND ${inWindow('r.timestamp', window)}
                           ORDER BY r.timestamp, r.id`;
      return {
        tracker,
        statuses: statuses.map(numericCoordinates),
        visits: visits.map(({ entered: _entered, exited: _exited, ...visit }) => numericCoordinates(visit)),
        reports: (batchSize) => read.stream<TrackReportTuple>(reports, batchSize),
        close: () => read.close(),
      };
    } catch (error) {
      await read.close();
      throw error;
    }
  }

  /** Whether the run exists and is visible. */
  async runVisible(scope: AccessScope, runId: number): Promise<boolean> {
    const row = await this.db.first<{ id: number }>(
      sql`SELECT pr.id FROM production_runs pr WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`,
    );
    return row !== null;
  }

  /** The visible trackers of a run that have a latest location, with it, by tracker id. */
  runPositions(scope: AccessScope, runId: number, statuses: string[] | undefined): Promise<RunPositionRow[]> {
    const statusFilter = statuses?.length ? sql`AND t.status = ANY(${statuses}::text[])` : raw('');
    return this.db.replica.rows<RunPositionRow>(
      sql`SELECT t.id AS tracker_id, t.name AS tracker_name, t.status, ll.latitude, ll.longitude,
                 ll.bucket AS timestamp, ll.reported_at, dl.name AS delivery_location_name
            FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
            JOIN LATERAL (${latestLocationLateral('t.id')}) ll ON TRUE
            LEFT JOIN delivery_locations dl ON dl.id = t.delivery_location_id
           WHERE t.production_run_id = ${runId} AND ${scope.visibleClient('pr.client_id')} ${statusFilter}
           ORDER BY t.id`,
    );
  }
}

function numericCoordinates<T extends { latitude: number; longitude: number }>(row: T): T {
  return { ...row, latitude: Number(row.latitude), longitude: Number(row.longitude) };
}
