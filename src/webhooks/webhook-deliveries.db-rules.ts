import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * Webhook deliveries queued at commit of the events' transaction (a deferred constraint trigger, like the in-app
 * fan-out and the e-mail queue): the first firing of a transaction inserts one delivery per (event, webhook) for all
 * of its events, for every active webhook subscribed to the event's type whose active owner can see the event's
 * client at that time (admins all, the `user` role by client_list) and, when the webhook lists client_ids, within
 * them. Then pg_notify('webhook_deliveries') wakes the delivery worker of every instance once the transaction commits.
 */
export const WEBHOOK_DELIVERY_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notification_events_webhooks',
      sql: `
      CREATE OR REPLACE FUNCTION notification_events_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        queued bigint;
      BEGIN
        IF current_setting('tracker_pipeline.webhooks_queued', true) = 'on' THEN RETURN NULL; END IF;
        PERFORM set_config('tracker_pipeline.webhooks_queued', 'on', true);
        WITH events AS (
          SELECT id, type, client_id FROM notification_events WHERE id >= NEW.id AND xact_id = pg_current_xact_id()
        ), inserted AS (
          INSERT INTO webhook_deliveries (webhook_id, event_type, event_id)
          SELECT w.id, e.type, e.id
            FROM events e
            JOIN webhooks w ON w.is_active AND e.type = ANY(w.event_types)
                           AND (w.client_ids IS NULL OR e.client_id = ANY(w.client_ids))
            JOIN users u ON u.id = w.user_id AND u.is_active
                        AND ('admin' = ANY(u.roles) OR ('user' = ANY(u.roles) AND e.client_id = ANY(u.client_list)))
           ORDER BY e.id, w.id
          RETURNING 1
        )
        SELECT count(*) INTO queued FROM inserted;
        IF queued > 0 THEN PERFORM pg_notify('webhook_deliveries', ''); END IF;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'notification_events_webhooks',
      table: 'notification_events',
      sql: `
      CREATE CONSTRAINT TRIGGER notification_events_webhooks AFTER INSERT ON notification_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notification_events_webhooks()`,
    },
  ],
};
