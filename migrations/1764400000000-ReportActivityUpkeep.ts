import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Report activity for alerts that open and resolve without racing ingest:
 * - tracker_report_activity.last_report_at becomes nullable: the alert check writes an empty row
 *   (no report yet) for a tracker it is about to alert on, so that it holds a row ingest must wait
 *   for, even for a tracker that never reported;
 * - report_activity_resolve(): ingest's resolution of the alerts its reports end, called from the
 *   batch statement, with a snapshot taken after that statement locked the trackers' activity rows.
 */
export class ReportActivityUpkeep1764400000000 implements MigrationInterface {
  name = 'ReportActivityUpkeep1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tracker_report_activity ALTER COLUMN last_report_at DROP NOT NULL`);
    await queryRunner.query(`
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
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP FUNCTION report_activity_resolve(integer[], timestamptz[], integer[], integer, integer);
      DELETE FROM tracker_report_activity WHERE last_report_at IS NULL;
      ALTER TABLE tracker_report_activity ALTER COLUMN last_report_at SET NOT NULL;`);
  }
}
