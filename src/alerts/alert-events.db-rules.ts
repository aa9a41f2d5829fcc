import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * Alert events go the way status changes go: rows of notification_events, so the in-app fan-out,
 * the e-mail queue and the webhook queue (deferred triggers on that table) take them in the
 * transaction that opened or resolved the alert. An alert event carries the Alert as it was then
 * (`alert`), and in the status columns the tracker's state at that moment (from = to = its current
 * status, its current entry): they describe the tracker, not a change.
 */
export const ALERT_EVENT_RULES: DatabaseRules = {
  functions: [
    /** One event of `event_type` per alert in `alert_ids` (ids ascending); answers how many were written. */
    {
      name: 'alert_events',
      sql: `
      CREATE OR REPLACE FUNCTION alert_events(alert_ids bigint[], event_type text) RETURNS integer
        LANGUAGE sql VOLATILE AS $$
        WITH written AS (
          INSERT INTO notification_events (type, tracker_id, tracker_name, production_run_id, client_id, from_status, to_status,
                                           source, status_entry_id, storage_location_id, delivery_location_id, occurred_at, alert)
          SELECT event_type, t.id, t.name, t.production_run_id, pr.client_id, t.status, t.status, cur.source, cur.id,
                 t.storage_location_id, t.delivery_location_id,
                 CASE WHEN event_type = 'tracker.alert_resolved' THEN a.resolved_at ELSE a.opened_at END,
                 jsonb_build_object('id', a.id, 'kind', a.kind, 'tracker_id', t.id, 'tracker_name', t.name,
                   'production_run_id', t.production_run_id, 'client_id', pr.client_id,
                   'opened_at', to_char(a.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   'resolved_at', to_char(a.resolved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   'details', a.details)
            FROM alerts a
            JOIN trackers t ON t.id = a.tracker_id
            JOIN production_runs pr ON pr.id = t.production_run_id
            CROSS JOIN LATERAL (
              SELECT h.id, h.source FROM tracker_status_history h
               WHERE h.tracker_id = t.id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1
            ) cur
           WHERE a.id = ANY(alert_ids)
           ORDER BY a.id
          RETURNING 1
        )
        SELECT count(*)::int FROM written
      $$`,
    },
    /**
     * A tracker that leaves IN_TRANSIT/IN_STORAGE (its status event says so and its row agrees) has
     * every open alert resolved in the same transaction, each with its event.
     */
    {
      name: 'notification_events_resolve_alerts',
      sql: `
      CREATE OR REPLACE FUNCTION notification_events_resolve_alerts() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        ids bigint[];
      BEGIN
        WITH resolved AS (
          UPDATE alerts a SET resolved_at = now()
           WHERE a.tracker_id = NEW.tracker_id AND a.resolved_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM trackers t WHERE t.id = NEW.tracker_id AND t.status IN ('IN_TRANSIT', 'IN_STORAGE'))
          RETURNING a.id
        )
        SELECT array_agg(id ORDER BY id) INTO ids FROM resolved;
        IF ids IS NOT NULL THEN PERFORM alert_events(ids, 'tracker.alert_resolved'); END IF;
        RETURN NULL;
      END $$`,
    },
    /**
     * Deleting trackers deletes their report activity. Not a foreign key: its check would lock the tracker row
     * (FOR KEY SHARE) in every ingest batch, and ingest must not wait for a status entry holding the tracker. Takes
     * the location-writes lock (727276) exclusively first, as the location rows' delete does, so in-flight batches
     * finish before and later ones no longer see the tracker.
     */
    {
      name: 'trackers_delete_report_activity',
      sql: `
      CREATE OR REPLACE FUNCTION trackers_delete_report_activity() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(727276);
        DELETE FROM tracker_report_activity a USING deleted_trackers d WHERE a.tracker_id = d.id;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'trackers_delete_report_activity',
      table: 'trackers',
      sql: `
      CREATE TRIGGER trackers_delete_report_activity AFTER DELETE ON trackers
        REFERENCING OLD TABLE AS deleted_trackers
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_delete_report_activity()`,
    },
    {
      name: 'notification_events_resolve_alerts',
      table: 'notification_events',
      sql: `
      CREATE TRIGGER notification_events_resolve_alerts AFTER INSERT ON notification_events
        FOR EACH ROW WHEN (NEW.type = 'tracker.status_changed' AND NEW.to_status NOT IN ('IN_TRANSIT', 'IN_STORAGE'))
        EXECUTE FUNCTION notification_events_resolve_alerts()`,
    },
  ],
};
