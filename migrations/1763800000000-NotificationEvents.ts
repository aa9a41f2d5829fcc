import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Status-change events and their per-user notifications, written by the database itself in the
 * transaction of the write that changes a tracker, whichever code path made it (a manual entry, a
 * PUT, the geofence replay adding or removing automatic entries).
 *
 * - trackers.status_entry_id / status_entry_at: the status entry the row's state reflects, kept by
 *   a BEFORE UPDATE trigger whenever status or a location is set. It is what lets the event
 *   trigger tell, after a write, which entries became current one after the other: those after the
 *   previous current entry, in (timestamp, id) order. NULL for a tracker never updated since its
 *   creation: its current entry is then the latest one written before the running transaction
 *   (an entry that became current later would have updated the row). Only automatic entries are
 *   ever deleted, and deleting them always updates the row, so for a NULL tracker that entry is
 *   still there.
 * - notification_events: one row per change of a tracker's current (status, storage location,
 *   destination), inserted by trackers_status_events() only — the single place events are written,
 *   so other consumers (e-mail) hook an AFTER INSERT trigger on this table. No foreign key to
 *   trackers: events outlive their tracker. `xact_id` is the writing transaction, which lets the
 *   commit-time fan-out find its own events.
 * - notifications: one row per (recipient, event). They are inserted at commit time (a deferred
 *   constraint trigger) under a transaction-level advisory lock, so notification ids become visible
 *   in increasing order: a stream that delivered id N can never later miss a smaller id that was
 *   still uncommitted. A pg_notify on `tracker_notifications` (payload: the greatest new id) wakes the
 *   streams of every instance once the transaction commits.
 *
 * Recipients are decided when the event's transaction commits: active users with the in-app
 * preference on who can see the tracker's client (admins all; `user` role by client_list).
 * Setting `tracker_pipeline.status_events` to 'off' for a transaction (SET LOCAL) writes no events:
 * bulk creation (CSV import, demo data) is creation, not a change.
 */
export class NotificationEvents1763800000000 implements MigrationInterface {
  name = 'NotificationEvents1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE trackers ADD COLUMN status_entry_id bigint, ADD COLUMN status_entry_at timestamptz;
      UPDATE trackers t SET status_entry_id = l.id, status_entry_at = l.timestamp
        FROM (SELECT DISTINCT ON (tracker_id) tracker_id, id, timestamp FROM tracker_status_history
               ORDER BY tracker_id, timestamp DESC, id DESC) l
       WHERE l.tracker_id = t.id;

      CREATE TABLE notification_events (
        id                    bigserial PRIMARY KEY,
        type                  text NOT NULL DEFAULT 'tracker.status_changed',
        tracker_id            integer NOT NULL,
        tracker_name          text NOT NULL,
        production_run_id     integer NOT NULL,
        client_id             integer NOT NULL,
        from_status           text NOT NULL,
        to_status             text NOT NULL,
        source                text NOT NULL,
        status_entry_id       bigint NOT NULL,
        storage_location_id   integer,
        delivery_location_id  integer,
        occurred_at           timestamptz NOT NULL,
        created_at            timestamptz NOT NULL DEFAULT now(),
        xact_id               xid8 NOT NULL DEFAULT pg_current_xact_id()
      );
      CREATE INDEX notification_events_tracker_idx ON notification_events (tracker_id, id);
      CREATE INDEX notification_events_created_at_idx ON notification_events USING brin (created_at);

      CREATE TABLE notifications (
        id          bigserial PRIMARY KEY,
        user_id     integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        event_id    bigint NOT NULL,
        read_at     timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      -- A user's page, newest first (and the user's rows when the user is deleted).
      CREATE INDEX notifications_user_idx ON notifications (user_id, id DESC);
      -- Unread counts and unread pages read only the unread rows.
      CREATE INDEX notifications_user_unread_idx ON notifications (user_id, id DESC) WHERE read_at IS NULL;
      -- Retention deletes by age; rows arrive in time order, so a block-range index suffices.
      CREATE INDEX notifications_created_at_idx ON notifications USING brin (created_at);

      CREATE FUNCTION trackers_follow_status_entry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        SELECT h.id, h.timestamp INTO NEW.status_entry_id, NEW.status_entry_at
          FROM tracker_status_history h WHERE h.tracker_id = NEW.id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1;
        RETURN NEW;
      END $$;
      CREATE TRIGGER trackers_follow_status_entry BEFORE UPDATE OF status, storage_location_id, delivery_location_id ON trackers
        FOR EACH ROW EXECUTE FUNCTION trackers_follow_status_entry();

      -- For each updated tracker whose current entry or state changed: walk the entries after the
      -- previous current one in (timestamp, id) order, one event each time the state changes, then
      -- one more when the final state differs from where the walk ended (an automatic entry removed,
      -- a new destination). The walked state follows the status rules: a storage location only
      -- while IN_STORAGE, a DELIVERED entry sets the destination only when there was none.
      CREATE FUNCTION trackers_status_events() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        c record;
        h record;
        cur_status text; cur_storage integer; cur_delivery integer;
        nxt_status text; nxt_storage integer; nxt_delivery integer;
        anchor_at timestamptz; anchor_id bigint;
        ev_tracker integer[] := '{}'; ev_from text[] := '{}'; ev_to text[] := '{}'; ev_entry bigint[] := '{}';
        ev_source text[] := '{}'; ev_storage integer[] := '{}'; ev_delivery integer[] := '{}'; ev_at timestamptz[] := '{}';
      BEGIN
        IF current_setting('tracker_pipeline.status_events', true) = 'off' THEN RETURN NULL; END IF;
        FOR c IN
          SELECT n.id, n.status, n.storage_location_id, n.delivery_location_id, n.status_entry_id,
                 o.status AS old_status, o.storage_location_id AS old_storage, o.delivery_location_id AS old_delivery,
                 o.status_entry_id AS old_entry_id, o.status_entry_at AS old_entry_at
            FROM new_rows n JOIN old_rows o ON o.id = n.id
           WHERE n.status_entry_id IS DISTINCT FROM o.status_entry_id
              OR (n.status, n.storage_location_id, n.delivery_location_id) IS DISTINCT FROM (o.status, o.storage_location_id, o.delivery_location_id)
           ORDER BY n.id
        LOOP
          cur_status := c.old_status; cur_storage := c.old_storage; cur_delivery := c.old_delivery;
          anchor_at := c.old_entry_at; anchor_id := c.old_entry_id;
          IF anchor_id IS NULL THEN
            SELECT timestamp, id INTO anchor_at, anchor_id FROM tracker_status_history
             WHERE tracker_id = c.id AND xmin <> pg_current_xact_id()::xid ORDER BY timestamp DESC, id DESC LIMIT 1;
            IF anchor_id IS NULL THEN anchor_at := '-infinity'; anchor_id := 0; END IF;
          END IF;
          FOR h IN
            SELECT id, status, timestamp, storage_location_id, delivery_location_id, source FROM tracker_status_history
             WHERE tracker_id = c.id AND (timestamp, id) > (anchor_at, anchor_id)
             ORDER BY timestamp, id
          LOOP
            IF h.id = c.status_entry_id THEN
              nxt_status := c.status; nxt_storage := c.storage_location_id; nxt_delivery := c.delivery_location_id;
            ELSE
              nxt_status := h.status;
              nxt_storage := CASE WHEN h.status = 'IN_STORAGE' THEN h.storage_location_id END;
              nxt_delivery := CASE WHEN h.status = 'DELIVERED' THEN coalesce(cur_delivery, h.delivery_location_id) ELSE cur_delivery END;
            END IF;
            IF (nxt_status, nxt_storage, nxt_delivery) IS DISTINCT FROM (cur_status, cur_storage, cur_delivery) THEN
              ev_tracker := ev_tracker || c.id; ev_from := ev_from || cur_status; ev_to := ev_to || nxt_status;
              ev_entry := ev_entry || h.id; ev_source := ev_source || h.source; ev_at := ev_at || h.timestamp;
              ev_storage := ev_storage || nxt_storage; ev_delivery := ev_delivery || nxt_delivery;
              cur_status := nxt_status; cur_storage := nxt_storage; cur_delivery := nxt_delivery;
            END IF;
          END LOOP;
          IF (c.status, c.storage_location_id, c.delivery_location_id) IS DISTINCT FROM (cur_status, cur_storage, cur_delivery) THEN
            SELECT id, source, timestamp INTO h FROM tracker_status_history WHERE id = c.status_entry_id;
            IF FOUND THEN
              ev_tracker := ev_tracker || c.id; ev_from := ev_from || cur_status; ev_to := ev_to || c.status;
              ev_entry := ev_entry || h.id; ev_source := ev_source || h.source; ev_at := ev_at || h.timestamp;
              ev_storage := ev_storage || c.storage_location_id; ev_delivery := ev_delivery || c.delivery_location_id;
            END IF;
          END IF;
        END LOOP;
        IF cardinality(ev_tracker) > 0 THEN
          INSERT INTO notification_events (tracker_id, tracker_name, production_run_id, client_id, from_status, to_status, source,
                                           status_entry_id, storage_location_id, delivery_location_id, occurred_at)
          SELECT e.tracker_id, n.name, n.production_run_id, pr.client_id, e.from_status, e.to_status, e.source,
                 e.entry_id, e.storage_id, e.delivery_id, e.occurred_at
            FROM unnest(ev_tracker, ev_from, ev_to, ev_entry, ev_source, ev_storage, ev_delivery, ev_at) WITH ORDINALITY
                 AS e(tracker_id, from_status, to_status, entry_id, source, storage_id, delivery_id, occurred_at, ord)
            JOIN new_rows n ON n.id = e.tracker_id
            JOIN production_runs pr ON pr.id = n.production_run_id
           ORDER BY e.ord;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER trackers_status_events AFTER UPDATE ON trackers
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_status_events();

      -- Commit-time fan-out: the first deferred firing in a transaction does all of its events at once.
      CREATE FUNCTION notification_events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
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
      END $$;
      CREATE CONSTRAINT TRIGGER notification_events_fan_out AFTER INSERT ON notification_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notification_events_fan_out();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER notification_events_fan_out ON notification_events;
      DROP FUNCTION notification_events_fan_out();
      DROP TRIGGER trackers_status_events ON trackers;
      DROP FUNCTION trackers_status_events();
      DROP TRIGGER trackers_follow_status_entry ON trackers;
      DROP FUNCTION trackers_follow_status_entry();
      DROP TABLE notifications;
      DROP TABLE notification_events;
      ALTER TABLE trackers DROP COLUMN status_entry_id, DROP COLUMN status_entry_at;
    `);
  }
}
