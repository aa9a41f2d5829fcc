import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * E-mail digests of status-change events, queued by the database in the event's transaction.
 *
 * - mail_settings: one row, written by the service at start from its configuration (SMTP_URL set,
 *   EMAIL_NOTIFY_STATUSES, EMAIL_DIGEST_MINUTES). The queueing trigger reads it, so every writer of
 *   events (any code path, any instance, behind PgBouncer too) queues by the same rules.
 * - mail_digests: one e-mail to one user. `queued` while it waits for its window to end or for a
 *   retry (`next_attempt_at`), then `sent` or `failed` (`finished_at`). A worker claims a due row
 *   by setting `claimed_until` (a lease) and bumping `claims`; a row accepts more events only while
 *   nobody ever claimed it and its window is still running.
 * - mail_digest_events: the events an e-mail lists. No foreign key to notification_events: the
 *   worker reads events with a join, and the event outlives nothing it needs.
 *
 * notification_events_mail() runs at commit (a deferred constraint trigger, like the in-app
 * fan-out) so recipients are decided by who can see the tracker and wants e-mail at that time: the
 * first deferred firing in a transaction takes all of that transaction's events. A per-user
 * transaction-level advisory lock keeps two committing transactions from opening two windows for
 * the same user; the open digest's row lock (FOR UPDATE, re-checked after a wait) keeps an event
 * from joining a digest a worker has just claimed.
 */
export class MailDigests1763805000000 implements MigrationInterface {
  name = 'MailDigests1763805000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mail_settings (
        singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        enabled         boolean NOT NULL DEFAULT false,
        statuses        text[] NOT NULL DEFAULT '{DELIVERED}',
        digest_seconds  double precision NOT NULL DEFAULT 900 CHECK (digest_seconds >= 0),
        updated_at      timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO mail_settings DEFAULT VALUES;

      CREATE TABLE mail_digests (
        id                bigserial PRIMARY KEY,
        user_id           integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        state             text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'failed')),
        window_start      timestamptz NOT NULL DEFAULT clock_timestamp(),
        window_end        timestamptz NOT NULL,
        next_attempt_at   timestamptz NOT NULL,
        claimed_until     timestamptz,
        claims            integer NOT NULL DEFAULT 0,
        attempts          integer NOT NULL DEFAULT 0,
        first_attempt_at  timestamptz,
        last_error        text,
        finished_at       timestamptz,
        created_at        timestamptz NOT NULL DEFAULT now()
      );
      -- The worker's claim: due rows only.
      CREATE INDEX mail_digests_due_idx ON mail_digests (next_attempt_at) WHERE state = 'queued';
      -- The queueing trigger: a user's window still open for events.
      CREATE INDEX mail_digests_open_idx ON mail_digests (user_id, id) WHERE state = 'queued' AND claims = 0;
      -- Retention of sent and failed rows.
      CREATE INDEX mail_digests_finished_idx ON mail_digests (finished_at) WHERE state <> 'queued';

      CREATE TABLE mail_digest_events (
        digest_id  bigint NOT NULL REFERENCES mail_digests(id) ON DELETE CASCADE,
        event_id   bigint NOT NULL,
        PRIMARY KEY (digest_id, event_id)
      );

      CREATE FUNCTION notification_events_mail() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        s record;
        r record;
        d bigint;
      BEGIN
        IF current_setting('tracker_pipeline.mail_queued', true) = 'on' THEN RETURN NULL; END IF;
        PERFORM set_config('tracker_pipeline.mail_queued', 'on', true);
        SELECT enabled, statuses, digest_seconds INTO s FROM mail_settings;
        IF NOT FOUND OR NOT s.enabled THEN RETURN NULL; END IF;
        -- One e-mail per user (per event when the window is 0), users in id order (lock order).
        FOR r IN
          SELECT u.id AS user_id, array_agg(e.id ORDER BY e.id) AS event_ids
            FROM notification_events e
            JOIN users u ON u.is_active AND u.notify_email
                        AND ('admin' = ANY(u.roles) OR ('user' = ANY(u.roles) AND e.client_id = ANY(u.client_list)))
           WHERE e.id >= NEW.id AND e.xact_id = pg_current_xact_id() AND e.to_status = ANY(s.statuses)
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
      END $$;
      CREATE CONSTRAINT TRIGGER notification_events_mail AFTER INSERT ON notification_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notification_events_mail();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER notification_events_mail ON notification_events;
      DROP FUNCTION notification_events_mail();
      DROP TABLE mail_digest_events;
      DROP TABLE mail_digests;
      DROP TABLE mail_settings;
    `);
  }
}
