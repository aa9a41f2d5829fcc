import { raw, sql, type Sql } from '../infrastructure/database/db.js';
import { COMPARABLE_DAYS, MINIMUM_SAMPLE, journeyStart } from '../arrival-estimates/comparable-journeys.port.js';

export interface AlertThresholds {
  /** ALERT_SILENT_HOURS: for trackers whose run sets no alert_silent_hours. */
  silentHours: number;
  /** ALERT_BATTERY_PERCENT. */
  batteryPercent: number;
}

/** Wire text of a timestamp column (UTC, milliseconds, Z). */
export const wireTime = (column: string): Sql =>
  raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * CTEs ending in `conditions(tracker_id, kind, details)`: every condition that holds now for the
 * trackers in IN_TRANSIT/IN_STORAGE, with the details an alert opening now would record. Set-based:
 * - silent: the later of the newest report (tracker_report_activity, kept by ingest) and the latest
 *   status entry (tracker_journey_facts.last_at, kept by the status history's triggers) is older
 *   than the run's alert_silent_hours or the default — one row of each per tracker, no raw reports;
 * - battery_low: the newest battery level (tracker_report_activity) is at or below the threshold;
 * - overdue: the elapsed time since the journey's start exceeds the p90 of the durations of all
 *   comparable journeys of the tracker's client (to its destination when at least MINIMUM_SAMPLE,
 *   else to every destination; fewer there: no condition). The statistics are computed once per
 *   (client, destination) for the clients that have candidates, fresh each time.
 */
export function alertConditions(t: AlertThresholds): Sql {
  return sql`
    candidates AS (
      SELECT t.id, t.delivery_location_id AS destination, pr.client_id,
             coalesce(pr.alert_silent_hours, ${t.silentHours}::int) AS hours
        FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
       WHERE t.status IN ('IN_TRANSIT', 'IN_STORAGE')
    ),
    silent AS (
      SELECT c.id AS tracker_id, 'silent'::text AS kind,
             jsonb_build_object('last_report_at', ${wireTime('ra.last_report_at')}, 'threshold_hours', c.hours) AS details
        FROM candidates c
        LEFT JOIN tracker_report_activity ra ON ra.tracker_id = c.id
        LEFT JOIN tracker_journey_facts f ON f.tracker_id = c.id
       WHERE greatest(ra.last_report_at, f.last_at) < now() - make_interval(hours => c.hours)
    ),
    battery_low AS (
      SELECT c.id AS tracker_id, 'battery_low'::text AS kind,
             jsonb_build_object('battery', ra.battery, 'reported_at', ${wireTime('ra.battery_at')}) AS details
        FROM candidates c JOIN tracker_report_activity ra ON ra.tracker_id = c.id
       WHERE ra.battery <= ${t.batteryPercent}::int
    ),
    on_the_way AS (
      SELECT c.id, c.client_id, c.destination, s.start
        FROM candidates c ${journeyStart('c.id', 's', true)}
       WHERE c.destination IS NOT NULL
    ),
    journeys AS (
      SELECT cpr.client_id, d.delivery_location_id AS destination, extract(epoch FROM d.at - cs.start) AS seconds
        FROM (SELECT DISTINCT client_id FROM on_the_way) w
        JOIN production_runs cpr ON cpr.client_id = w.client_id
        JOIN trackers ct ON ct.production_run_id = cpr.id AND ct.status = 'DELIVERED'
        JOIN LATERAL (
          SELECT h.timestamp AS at, h.status, h.delivery_location_id FROM tracker_status_history h
           WHERE h.tracker_id = ct.id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1
        ) d ON d.status = 'DELIVERED' AND d.at >= now() - make_interval(days => ${COMPARABLE_DAYS})
        ${journeyStart('ct.id', 'cs', true)}
    ),
    by_destination AS (
      SELECT client_id, destination, count(*) AS n, percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90
        FROM journeys GROUP BY client_id, destination
    ),
    by_client AS (
      SELECT client_id, count(*) AS n, percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90
        FROM journeys GROUP BY client_id
    ),
    overdue AS (
      SELECT w.id AS tracker_id, 'overdue'::text AS kind,
             jsonb_build_object('start', ${wireTime('w.start')}, 'p90_days', b.p90 / 86400, 'basis', b.basis,
                                'sample_size', b.n) AS details
        FROM on_the_way w
        JOIN by_client bc ON bc.client_id = w.client_id
        LEFT JOIN by_destination bd ON bd.client_id = w.client_id AND bd.destination = w.destination
        CROSS JOIN LATERAL (
          SELECT CASE WHEN bd.n >= ${MINIMUM_SAMPLE} THEN 'destination' ELSE 'all' END AS basis,
                 CASE WHEN bd.n >= ${MINIMUM_SAMPLE} THEN bd.n ELSE bc.n END AS n,
                 CASE WHEN bd.n >= ${MINIMUM_SAMPLE} THEN bd.p90 ELSE bc.p90 END AS p90
        ) b
       WHERE b.n >= ${MINIMUM_SAMPLE} AND extract(epoch FROM now() - w.start) > b.p90
    ),
    conditions AS (
      SELECT * FROM silent UNION ALL SELECT * FROM battery_low UNION ALL SELECT * FROM overdue
    )`;
}
