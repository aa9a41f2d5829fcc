import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * The alerts' side of ingest's report-activity upkeep (ReportActivityUpkeep), run inside the batch
 * statement after the activity rows are written.
 */
export const REPORT_ACTIVITY_RULES: DatabaseRules = {
  functions: [
    /**
     * Resolves, with their events, the open `silent` alerts that the trackers' newest reports end and
     * the `battery_low` alerts that a level above `low_battery_percent` ends; answers how many. The
     * arrays are the activity rows just written, one entry per tracker. VOLATILE plpgsql on purpose: its
     * query takes a snapshot of its own, after the calling statement locked those rows, so an alert the
     * check opened while holding them (and committed before letting go) is seen and resolved here.
     */
    {
      name: 'report_activity_resolve',
      sql: `
      CREATE OR REPLACE FUNCTION report_activity_resolve(activity_tracker_ids integer[], activity_last_report_at timestamptz[],
                                                         activity_battery integer[], default_silent_hours integer,
                                                         low_battery_percent integer) RETURNS integer
        LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        ids bigint[];
      BEGIN
        WITH ended AS MATERIALIZED (
          -- A probe of the open-alert index per tracker (a LATERAL kept apart by OFFSET 0), never a join
          -- over all open alerts: the planner cannot know how few trackers a batch holds.
          SELECT o.id
            FROM unnest(activity_tracker_ids, activity_last_report_at, activity_battery) AS ra(tracker_id, last_report_at, battery)
            JOIN trackers t ON t.id = ra.tracker_id
            JOIN production_runs pr ON pr.id = t.production_run_id
            CROSS JOIN LATERAL (
              SELECT x.id, x.kind FROM alerts x
               WHERE x.tracker_id = ra.tracker_id AND x.kind IN ('silent', 'battery_low') AND x.resolved_at IS NULL
              OFFSET 0
            ) o
           WHERE (o.kind = 'silent'
                  AND ra.last_report_at >= now() - make_interval(hours => coalesce(pr.alert_silent_hours, default_silent_hours)))
              OR (o.kind = 'battery_low' AND ra.battery > low_battery_percent)
        ),
        resolved AS (
          UPDATE alerts a SET resolved_at = now() FROM ended WHERE a.id = ended.id AND a.resolved_at IS NULL
          RETURNING a.id
        )
        SELECT array_agg(id ORDER BY id) INTO ids FROM resolved;
        IF ids IS NULL THEN RETURN 0; END IF;
        RETURN alert_events(ids, 'tracker.alert_resolved');
      END $$`,
    },
  ],
  triggers: [],
};
