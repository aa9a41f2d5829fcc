import { Injectable } from '@nestjs/common';
import { Db, raw, sql, type Sql } from '../infrastructure/database/db.js';
import type { TrackerStatus } from '../trackers/entities/tracker-status.js';
import { MICROS_PER_MINUTE, type AutomaticEntry, type ReplayState, type Visit } from './geofence-replay.js';

/** A report position in replay order: (timestamp in epoch microseconds as text, report id). */
export interface Progress {
  ts: string;
  reportId: string;
}

const micros = (column: string): Sql => raw(`(extract(epoch FROM ${column}) * 1000000)::bigint::text`);
const fromMicros = (value: string): Sql => sql`(timestamptz 'epoch' + ${value}::bigint * interval '1 microsecond')`;

/**
 * What a replay needs to resume after the last report it took into account (geofence_progress),
 * and the writes of a resumed replay, which only add to what is stored.
 */
@Injectable()
export class GeofenceResumeRepository {
  constructor(private readonly db: Db) {}

  async progress(trackerId: number): Promise<(Progress & { micros: number }) | null> {
    const row = await this.db.first<{ ts: string; report_id: string }>(
      sql`SELECT ${micros('last_ts')} AS ts, last_report_id::text AS report_id FROM geofence_progress WHERE tracker_id = ${trackerId}`,
    );
    return row ? { ts: row.ts, reportId: row.report_id, micros: Number(row.ts) } : null;
  }

  async saveProgress(trackerId: number, last: Progress | null): Promise<void> {
    if (!last) {
      await this.db.execute(sql`DELETE FROM geofence_progress WHERE tracker_id = ${trackerId}`);
      return;
    }
    await this.db.execute(
      sql`INSERT INTO geofence_progress AS g (tracker_id, last_ts, last_report_id) VALUES (${trackerId}, ${fromMicros(last.ts)}, ${last.reportId}::bigint)
          ON CONFLICT (tracker_id) DO UPDATE SET last_ts = EXCLUDED.last_ts, last_report_id = EXCLUDED.last_report_id`,
    );
  }

  /**
   * The replay's state after the report at `at`: the open visit (with its location's dwell now),
   * the latest entry at or before that time (a manual entry before an automatic one of the same
   * time, as the replay takes them), and the latest manual entry's time.
   */
  async stateAt(trackerId: number, at: Progress, defaultDwellMinutes: number): Promise<ReplayState> {
    const open = await this.db.first<{ id: string; storage_location_id: number | null; delivery_location_id: number | null; entered: string; last: string; report_count: number; confirmed: boolean; dwell: number | null }>(
      sql`SELECT v.id::text AS id, v.storage_location_id, v.delivery_location_id, ${micros('v.entered_at')} AS entered, ${micros('v.last_seen_at')} AS last,
                 v.report_count, v.confirmed, coalesce(sl.dwell_minutes, dl.dwell_minutes) AS dwell
            FROM geofence_visits v
            LEFT JOIN storage_locations sl ON sl.id = v.storage_location_id
            LEFT JOIN delivery_locations dl ON dl.id = v.delivery_location_id
           WHERE v.tracker_id = ${trackerId} AND v.exited_at IS NULL`,
    );
    const upTo = fromMicros(at.ts);
    const latest = await this.db.first<{ status: TrackerStatus; storage_location_id: number | null }>(
      sql`SELECT status, storage_location_id FROM tracker_status_history WHERE tracker_id = ${trackerId} AND timestamp <= ${upTo}
           ORDER BY timestamp DESC, (source = 'geofence') DESC, id DESC LIMIT 1`,
    );
    const manual = await this.db.one<{ ts: string | null }>(
      sql`SELECT ${micros('max(timestamp)')} AS ts FROM tracker_status_history WHERE tracker_id = ${trackerId} AND source <> 'geofence' AND timestamp <= ${upTo}`,
    );
    const visit: Visit | null = open && {
      id: open.id,
      type: open.storage_location_id !== null ? 'storage' : 'delivery',
      locationId: (open.storage_location_id ?? open.delivery_location_id) as number,
      enteredAt: Number(open.entered),
      lastSeenAt: Number(open.last),
      exitedAt: null,
      reportCount: open.report_count,
      confirmed: open.confirmed,
      dwell: (open.dwell ?? defaultDwellMinutes) * MICROS_PER_MINUTE,
    };
    return {
      open: visit,
      status: latest ? { status: latest.status, storageLocationId: latest.storage_location_id } : null,
      latestManual: manual.ts === null ? -Infinity : Number(manual.ts),
    };
  }

  /** A resumed replay's result: the continued visit is updated, later visits and entries are added. */
  async append(trackerId: number, visits: Visit[], entries: AutomaticEntry[]): Promise<void> {
    const continued = visits[0]?.id ? visits[0] : null;
    const added = continued ? visits.slice(1) : visits;
    if (continued) {
      await this.db.execute(
        sql`UPDATE geofence_visits SET last_seen_at = ${fromMicros(String(continued.lastSeenAt))},
                   exited_at = ${continued.exitedAt === null ? null : fromMicros(String(continued.exitedAt))},
                   report_count = ${continued.reportCount}::int, confirmed = ${continued.confirmed}
             WHERE id = ${continued.id}::bigint`,
      );
    }
    await this.insertVisits(trackerId, added);
    await this.insertEntries(trackerId, entries);
  }

  async insertVisits(trackerId: number, visits: Visit[]): Promise<void> {
    if (visits.length === 0) return;
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

  async insertEntries(trackerId: number, entries: AutomaticEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const col = <T>(pick: (e: AutomaticEntry) => T) => entries.map(pick);
    await this.db.execute(
      sql`INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by, source)
          SELECT ${trackerId}::int, u.status, timestamptz 'epoch' + u.ts * interval '1 microsecond', u.s, u.d, NULL, NULL, 'geofence'
            FROM unnest(${col((e) => e.status)}::text[], ${col((e) => String(e.timestamp))}::bigint[], ${col((e) => e.storageLocationId)}::int[],
                        ${col((e) => e.deliveryLocationId)}::int[]) WITH ORDINALITY AS u(status, ts, s, d, ord)
           ORDER BY u.ord`,
    );
  }
}
