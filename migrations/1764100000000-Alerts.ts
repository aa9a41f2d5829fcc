import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Alerts: conditions of trackers in transit or in storage (silent, overdue, battery_low) with a
 * start and an end.
 *
 * - tracker_report_activity: per tracker, the newest report's timestamp (any report, eligible or
 *   not) and the newest report that carried a battery level, kept by ingest in the batch's
 *   transaction, so the periodic check reads one row per tracker instead of raw reports. Filled
 *   here from the reports already stored. No foreign key (its check would lock the tracker row in
 *   every batch): trackers_delete_report_activity() deletes a deleted tracker's row, after
 *   in-flight batches, like the location rows. Nearly every batch updates its trackers' rows: half of
 *   each page is left free so those updates stay on their page (HOT, no new index entry).
 * - alerts: one row per alert; at most one open (resolved_at null) per (tracker, kind), enforced by
 *   a partial unique index. `details` is the snapshot taken when it opened, in wire form. A
 *   tracker's alerts go with it (its events stay).
 * - notification_events.alert: the Alert an alert event announces, as it was then (null for status
 *   changes). alert_events() writes those events; notification_events_resolve_alerts() resolves a
 *   tracker's open alerts when its status event says it left IN_TRANSIT/IN_STORAGE.
 * - mail_settings.alert_kinds: the kinds whose opened alerts join e-mail digests; the mail trigger
 *   now tells the two event families apart.
 */
export class Alerts1764100000000 implements MigrationInterface {
  name = 'Alerts1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tracker_report_activity (
        tracker_id      integer PRIMARY KEY,
        last_report_at  timestamptz NOT NULL,
        battery         smallint,
        battery_at      timestamptz
      ) WITH (fillfactor = 50);
      INSERT INTO tracker_report_activity (tracker_id, last_report_at, battery, battery_at)
      SELECT t.id, r.last_at, b.battery, b.timestamp
        FROM trackers t
        JOIN LATERAL (SELECT max(timestamp) AS last_at FROM location_reports WHERE tracker_id = t.id) r ON r.last_at IS NOT NULL
        LEFT JOIN LATERAL (
          SELECT battery, timestamp FROM location_reports
           WHERE tracker_id = t.id AND battery IS NOT NULL ORDER BY timestamp DESC, id DESC LIMIT 1
        ) b ON true;

      CREATE TABLE alerts (
        id           bigserial PRIMARY KEY,
        kind         text NOT NULL CONSTRAINT alerts_kind CHECK (kind IN ('silent', 'overdue', 'battery_low')),
        tracker_id   integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
        opened_at    timestamptz NOT NULL DEFAULT now(),
        resolved_at  timestamptz,
        details      jsonb NOT NULL
      );
      CREATE UNIQUE INDEX alerts_one_open_idx ON alerts (tracker_id, kind) WHERE resolved_at IS NULL;
      CREATE INDEX alerts_tracker_idx ON alerts (tracker_id, opened_at DESC, id DESC);
      CREATE INDEX alerts_opened_idx ON alerts (opened_at DESC, id DESC);

      ALTER TABLE notification_events ADD COLUMN alert jsonb;
      ALTER TABLE mail_settings ADD COLUMN alert_kinds text[] NOT NULL DEFAULT '{silent,overdue}';

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
      $$;
      CREATE OR REPLACE FUNCTION trackers_delete_report_activity() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(727276);
        DELETE FROM tracker_report_activity a USING deleted_trackers d WHERE a.tracker_id = d.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER trackers_delete_report_activity AFTER DELETE ON trackers
        REFERENCING OLD TABLE AS deleted_trackers
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_delete_report_activity();

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
      END $$;
      CREATE TRIGGER notification_events_resolve_alerts AFTER INSERT ON notification_events
        FOR EACH ROW WHEN (NEW.type = 'tracker.status_changed' AND NEW.to_status NOT IN ('IN_TRANSIT', 'IN_STORAGE'))
        EXECUTE FUNCTION notification_events_resolve_alerts();
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
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER trackers_delete_report_activity ON trackers;
      DROP FUNCTION trackers_delete_report_activity();
      DROP TRIGGER notification_events_resolve_alerts ON notification_events;
      DROP FUNCTION notification_events_resolve_alerts();
      DROP FUNCTION alert_events(bigint[], text);
      DROP TABLE alerts;
      DROP TABLE tracker_report_activity;
      DELETE FROM notification_events WHERE type <> 'tracker.status_changed';
      ALTER TABLE notification_events DROP COLUMN alert;
      ALTER TABLE mail_settings DROP COLUMN alert_kinds;
    `);
  }
}
