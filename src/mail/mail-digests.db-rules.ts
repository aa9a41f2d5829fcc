import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * E-mail digests queued at commit of the events' transaction (a deferred constraint trigger, like the in-app
 * fan-out), by the rules in mail_settings, which the service writes at start: status changes to the listed statuses
 * and opened alerts of the listed kinds. A per-user advisory lock keeps two
 * committing transactions from opening two windows for one user; the open digest's row lock keeps an event from
 * joining a digest a worker has just claimed.
 */
export const MAIL_DIGEST_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notification_events_mail',
      sql: `
      CREATE OR REPLACE FUNCTION notification_events_mail() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        s record;
        r record;
        d bigint;
      BEGIN
        IF current_setting('tracker_pipeline.mail_queued', true) = 'on' THEN RETURN NULL; END IF;
        PERFORM set_config('tracker_pipeline.mail_queued', 'on', true);
        SELECT enabled, statuses, alert_kinds, digest_seconds INTO s FROM mail_settings;
        IF NOT FOUND OR NOT s.enabled THEN RETURN NULL; END IF;
        -- One e-mail per user (per event when the window is 0), users in id order (lock order).
        FOR r IN
          SELECT u.id AS user_id, array_agg(e.id ORDER BY e.id) AS event_ids
            FROM notification_events e
            JOIN users u ON u.is_active AND u.notify_email
                        AND ('admin' = ANY(u.roles) OR ('user' = ANY(u.roles) AND e.client_id = ANY(u.client_list)))
           WHERE e.id >= NEW.id AND e.xact_id = pg_current_xact_id()
             AND CASE e.type WHEN 'tracker.status_changed' THEN e.to_status = ANY(s.statuses)
                             WHEN 'tracker.alert_opened' THEN e.alert->>'kind' = ANY(s.alert_kinds)
                             ELSE false END
           GROUP BY u.id, CASE WHEN s.digest_seconds = 0 THEN e.id END
           ORDER BY u.id, min(e.id)
        LOOP
          d := NULL;
          IF s.digest_seconds > 0 THEN
            PERFORM pg_advisory_xact_lock(727274020, r.user_id);
            SELECT id INTO d FROM mail_digests
             WHERE user_id = r.user_id AND state = 'queued' AND claims = 0 AND window_end > clock_timestamp()
             ORDER BY id DESC LIMIT 1 FOR UPDATE;
          END IF;
          IF d IS NULL THEN
            INSERT INTO mail_digests (user_id, window_end, next_attempt_at)
            VALUES (r.user_id, clock_timestamp() + make_interval(secs => s.digest_seconds), clock_timestamp() + make_interval(secs => s.digest_seconds))
            RETURNING id INTO d;
          END IF;
          INSERT INTO mail_digest_events (digest_id, event_id) SELECT d, unnest(r.event_ids);
        END LOOP;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'notification_events_mail',
      table: 'notification_events',
      sql: `
      CREATE CONSTRAINT TRIGGER notification_events_mail AFTER INSERT ON notification_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notification_events_mail()`,
    },
  ],
};
