import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * In-app notifications: at commit (a deferred constraint trigger) the first firing of a transaction inserts one row
 * per (recipient, event) for all of its events, under a transaction-level advisory lock so notification ids become
 * visible in increasing order, then wakes every instance's streams with pg_notify('tracker_notifications', greatest
 * new id). Recipients: active users with in-app notifications on who can see the tracker's client (admins all, the
 * `user` role by client_list).
 */
export const NOTIFICATION_FAN_OUT_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notification_events_fan_out',
      sql: `
      CREATE OR REPLACE FUNCTION notification_events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        last_id bigint;
      BEGIN
        IF current_setting('tracker_pipeline.fanned_out', true) = 'on' THEN RETURN NULL; END IF;
        PERFORM set_config('tracker_pipeline.fanned_out', 'on', true);
        PERFORM pg_advisory_xact_lock(727274019);
        -- Admins get every event; other users with the user role those of the clients in their
        -- client_list (unnested, so many events join users by hash instead of testing each pair).
        WITH events AS (
          SELECT id, client_id, created_at FROM notification_events WHERE id >= NEW.id AND xact_id = pg_current_xact_id()
        ), recipients AS (
          SELECT u.id AS user_id, e.id AS event_id, e.created_at
            FROM events e
            JOIN (SELECT DISTINCT u.id, c.client_id
                    FROM users u CROSS JOIN LATERAL unnest(u.client_list) AS c(client_id)
                   WHERE u.is_active AND u.notify_ui AND 'user' = ANY(u.roles) AND NOT 'admin' = ANY(u.roles)) u ON u.client_id = e.client_id
          UNION ALL
          SELECT u.id, e.id, e.created_at
            FROM events e JOIN users u ON u.is_active AND u.notify_ui AND 'admin' = ANY(u.roles)
        ), inserted AS (
          INSERT INTO notifications (user_id, event_id, created_at)
          SELECT user_id, event_id, created_at FROM recipients ORDER BY event_id, user_id
          RETURNING id
        )
        SELECT max(id) INTO last_id FROM inserted;
        IF last_id IS NOT NULL THEN PERFORM pg_notify('tracker_notifications', last_id::text); END IF;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'notification_events_fan_out',
      table: 'notification_events',
      sql: `
      CREATE CONSTRAINT TRIGGER notification_events_fan_out AFTER INSERT ON notification_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notification_events_fan_out()`,
    },
  ],
};
