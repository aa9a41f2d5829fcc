import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { sql, type Sql } from '../infrastructure/database/db.js';

/**
 * What the alerts add to a statement that stores location reports: common table expressions to
 * append to its WITH list, and a column its final SELECT must name (an unreferenced CTE that only
 * calls a function would not run).
 */
export interface ReportActivityStep {
  ctes: Sql;
  column: Sql;
}

/**
 * The alerts as writers of location reports see them; the only file of alerts they import. The
 * writer asks for `step(newReports)` and runs it in the statement that stores the reports, fed by
 * the rows that statement actually inserted (a duplicate changes nothing, so it reaches no alert).
 * The step keeps each tracker's newest report timestamp and newest battery level
 * (tracker_report_activity, what the periodic check reads instead of raw reports), locking those
 * rows in tracker order, then resolves with their events the open `silent` alerts the new reports
 * end and the `battery_low` alerts a level above the threshold ends (report_activity_resolve(),
 * report-activity.db-rules.ts). The check opens `silent` and `battery_low` alerts only while it
 * holds the same rows (AlertCheckRepository), so a report and an opening never miss each other.
 */
@Injectable()
export class ReportActivityUpkeep {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * `newReports`: a relation of the statement (a CTE name) with the inserted reports' `id`,
   * `tracker_id`, `timestamp` and `battery`. Null when alerts are off.
   */
  step(newReports: Sql): ReportActivityStep | null {
    if (!this.config.alerts.enabled) return null;
    const { silentHours, batteryPercent } = this.config.alerts;
    // Per tracker: the newest timestamp, and the battery of the newest report (by timestamp, id) carrying one.
    const ctes = sql`
      activity_input AS (
        SELECT r.tracker_id, max(r.timestamp) AS last_report_at,
               (array_agg(r.battery ORDER BY r.timestamp DESC, r.id DESC) FILTER (WHERE r.battery IS NOT NULL))[1] AS battery,
               max(r.timestamp) FILTER (WHERE r.battery IS NOT NULL) AS battery_at
          FROM ${newReports} r GROUP BY r.tracker_id
      ),
      activity AS (
        INSERT INTO tracker_report_activity AS cur (tracker_id, last_report_at, battery, battery_at)
        SELECT tracker_id, last_report_at, battery, battery_at FROM activity_input ORDER BY tracker_id
        ON CONFLICT (tracker_id) DO UPDATE
           SET last_report_at = greatest(cur.last_report_at, EXCLUDED.last_report_at),
               battery = CASE WHEN EXCLUDED.battery_at >= cur.battery_at OR cur.battery_at IS NULL
                              THEN coalesce(EXCLUDED.battery, cur.battery) ELSE cur.battery END,
               battery_at = CASE WHEN EXCLUDED.battery_at >= cur.battery_at OR cur.battery_at IS NULL
                                 THEN coalesce(EXCLUDED.battery_at, cur.battery_at) ELSE cur.battery_at END
         WHERE cur.last_report_at IS NULL
            OR EXCLUDED.last_report_at > cur.last_report_at
            OR EXCLUDED.battery_at >= cur.battery_at
            OR (cur.battery_at IS NULL AND EXCLUDED.battery_at IS NOT NULL)
        RETURNING cur.tracker_id, cur.last_report_at, cur.battery
      ),
      activity_resolved AS (
        SELECT report_activity_resolve(array_agg(tracker_id), array_agg(last_report_at), array_agg(battery::int),
                                       ${silentHours}::int, ${batteryPercent}::int) AS n
          FROM activity HAVING count(*) > 0
      )`;
    return { ctes, column: sql`(SELECT n FROM activity_resolved) AS alerts_resolved` };
  }
}
