import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outgoing webhooks: subscriptions and their deliveries, queued by the database in the event's
 * transaction.
 *
 * - webhooks: one subscription of a user (its owner) to event types, optionally narrowed to
 *   client_ids. `secret` is the signing secret in its stored form (encrypted by the service, see
 *   WebhookSecrets); after a rotation `previous_secret` keeps signing beside it until
 *   `previous_secret_until`. `failing_since` is the first failed attempt since the last success
 *   (24 hours of that disables the webhook); `disabled_reason` says why it was disabled.
 * - webhook_deliveries: one event (or test) to one webhook, an outbox of the consumer kit:
 *   `pending` until `succeeded` or `failed` (`finished_at`); due at `next_attempt_at`; a worker
 *   claims it by setting `claimed_until` (a lease) and bumping `claims` (the fencing token).
 *   `event_id` has no foreign key: events and deliveries are purged by age on their own.
 *
 * notification_events_webhooks() runs at commit (a deferred constraint trigger, like the in-app
 * fan-out and the e-mail queue), so recipients are decided by who can see the tracker at that
 * time, and wakes every instance's worker with pg_notify('webhook_deliveries').
 */
export class Webhooks1764010000000 implements MigrationInterface {
  name = 'Webhooks1764010000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id                     serial PRIMARY KEY,
        user_id                integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        url                    text NOT NULL,
        event_types            text[] NOT NULL,
        client_ids             integer[],
        description            text,
        is_active              boolean NOT NULL DEFAULT true,
        disabled_reason        text,
        secret                 text NOT NULL,
        previous_secret        text,
        previous_secret_until  timestamptz,
        failing_since          timestamptz,
        created_at             timestamptz NOT NULL DEFAULT now(),
        updated_at             timestamptz NOT NULL DEFAULT now()
      );
      -- A user's webhooks (and the user's rows when the user is deleted).
      CREATE INDEX webhooks_user_idx ON webhooks (user_id, id);

      CREATE TABLE webhook_deliveries (
        id                bigserial PRIMARY KEY,
        webhook_id        integer NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_type        text NOT NULL,
        event_id          bigint,
        status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts          integer NOT NULL DEFAULT 0,
        last_attempt_at   timestamptz,
        next_attempt_at   timestamptz NOT NULL DEFAULT now(),
        claimed_until     timestamptz,
        claims            integer NOT NULL DEFAULT 0,
        first_attempt_at  timestamptz,
        response_status   integer,
        response_time_ms  integer,
        error             text,
        finished_at       timestamptz,
        created_at        timestamptz NOT NULL DEFAULT now()
      );
      -- The worker's claim: due rows only.
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      -- A webhook's log, newest first (and its rows when it is deleted).
      CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id DESC);
      -- Retention deletes by age; rows arrive in time order, so a block-range index suffices.
      CREATE INDEX webhook_deliveries_created_at_idx ON webhook_deliveries USING brin (created_at);

      CREATE FUNCTION notification_events_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
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
      END $$;
      CREATE CONSTRAINT TRIGGER notification_events_webhooks AFTER INSERT ON notification_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notification_events_webhooks();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER notification_events_webhooks ON notification_events;
      DROP FUNCTION notification_events_webhooks();
      DROP TABLE webhook_deliveries;
      DROP TABLE webhooks;
    `);
  }
}
