import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { Db, sql } from '../infrastructure/database/db.js';
import {
  intArray,
  nullableIntArray,
  nullableTextArrayParam,
  timestamptzArray,
} from '../infrastructure/database/pg-arrays.js';

/** A write's reports as the alerts need them: column arrays of equal length. */
export interface ReportActivityColumns {
  trackerId: readonly number[];
  /** The reports' timestamps, epoch milliseconds. */
  epochMs: readonly number[];
  battery: readonly (number | null)[];
}

interface TrackerActivity {
  lastMs: number;
  battery: number | null;
  batteryMs: number | null;
}

/**
 * The alerts as writers of location reports see them; the only file of alerts they import. In the
 * write's transaction, after its reports are stored: `record` keeps each tracker's newest report
 * timestamp and newest battery level (tracker_report_activity, what the periodic check reads
 * instead of raw reports) and resolves, with their events, the open `silent` alerts the new
 * reports end and the `battery_low` alerts a level above the threshold ends. One statement; a
 * second only when something was resolved.
 */
@Injectable()
export class ReportActivityRecorder {
  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * `reports`: the write's valid reports; those of trackers not in `stored` (unknown or out of scope)
   * are left out. Duplicates of stored reports count as what they repeat: a report at that time exists.
   */
  async record(reports: ReportActivityColumns, stored: ReadonlySet<number>): Promise<void> {
    if (!this.config.alerts.enabled) return;
    const byTracker = new Map<number, TrackerActivity>();
    for (let i = 0; i < reports.trackerId.length; i++) {
      const trackerId = reports.trackerId[i];
      if (!stored.has(trackerId)) continue;
      const ms = reports.epochMs[i];
      const battery = reports.battery[i];
      let known = byTracker.get(trackerId);
      if (known === undefined) byTracker.set(trackerId, (known = { lastMs: ms, battery: null, batteryMs: null }));
      if (ms > known.lastMs) known.lastMs = ms;
      if (battery !== null && (known.batteryMs === null || ms >= known.batteryMs)) {
        known.battery = battery;
        known.batteryMs = ms;
      }
    }
    if (byTracker.size === 0) return;
    const ids = [...byTracker.keys()].sort((a, b) => a - b);
    const rows = ids.map((id) => byTracker.get(id) as TrackerActivity);
    const { silentHours, batteryPercent } = this.config.alerts;
    // Trackers in id order, so concurrent batches lock their rows in the same order.
    const { resolved } = await this.db.one<{ resolved: string[] }>(
      sql`WITH input AS (
            SELECT * FROM unnest(${intArray(ids)}, ${timestamptzArray(rows.map((r) => iso(r.lastMs)))},
                                 ${nullableIntArray(rows.map((r) => r.battery))},
                                 ${nullableTextArrayParam(rows.map((r) => (r.batteryMs === null ? null : iso(r.batteryMs))))}::timestamptz[])
                     AS i(tracker_id, last_report_at, battery, battery_at)
          ),
          activity AS (
            INSERT INTO tracker_report_activity AS cur (tracker_id, last_report_at, battery, battery_at)
            SELECT tracker_id, last_report_at, battery, battery_at FROM input ORDER BY tracker_id
            ON CONFLICT (tracker_id) DO UPDATE
               SET last_report_at = greatest(cur.last_report_at, EXCLUDED.last_report_at),
                   battery = CASE WHEN EXCLUDED.battery_at >= cur.battery_at OR cur.battery_at IS NULL
                                  THEN coalesce(EXCLUDED.battery, cur.battery) ELSE cur.battery END,
                   battery_at = CASE WHEN EXCLUDED.battery_at >= cur.battery_at OR cur.battery_at IS NULL
                                     THEN coalesce(EXCLUDED.battery_at, cur.battery_at) ELSE cur.battery_at END
             WHERE EXCLUDED.last_report_at > cur.last_report_at
                OR EXCLUDED.battery_at >= cur.battery_at
                OR (cur.battery_at IS NULL AND EXCLUDED.battery_at IS NOT NULL)
            RETURNING cur.tracker_id, cur.last_report_at, cur.battery
          ),
          ended AS MATERIALIZED (
            -- A probe of the open-alert index per tracker (a LATERAL kept apart by OFFSET 0), never a join
            -- over all open alerts: the planner cannot know how few trackers the batch holds.
            SELECT o.id
              FROM activity ra
              JOIN trackers t ON t.id = ra.tracker_id
              JOIN production_runs pr ON pr.id = t.production_run_id
              CROSS JOIN LATERAL (
                SELECT x.id, x.kind FROM alerts x
                 WHERE x.tracker_id = ra.tracker_id AND x.kind IN ('silent', 'battery_low') AND x.resolved_at IS NULL
                OFFSET 0
              ) o
             WHERE (o.kind = 'silent'
                    AND ra.last_report_at >= now() - make_interval(hours => coalesce(pr.alert_silent_hours, ${silentHours}::int)))
                OR (o.kind = 'battery_low' AND ra.battery > ${batteryPercent}::int)
          ),
          resolved AS (
            UPDATE alerts a SET resolved_at = now() FROM ended WHERE a.id = ended.id AND a.resolved_at IS NULL
            RETURNING a.id
          )
          SELECT coalesce((SELECT array_agg(id::text ORDER BY id) FROM resolved), '{}') AS resolved`,
    );
    if (resolved.length > 0)
      await this.db.execute(sql`SELECT alert_events(${resolved}::bigint[], 'tracker.alert_resolved')`);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
