import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * Status-change events, written by the database in the transaction of whatever write changed a tracker (manual entry,
 * PUT, geofence replay). SET LOCAL tracker_pipeline.status_events = 'off' writes none (bulk creation).
 */
export const STATUS_EVENT_RULES: DatabaseRules = {
  functions: [
    /**
     * Keeps trackers.status_entry_id / status_entry_at on the entry the row's state reflects, so the event trigger
     * can tell which entries became current one after the other.
     */
    {
      name: 'trackers_follow_status_entry',
      sql: `
      CREATE OR REPLACE FUNCTION trackers_follow_status_entry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        SELECT h.id, h.timestamp INTO NEW.status_entry_id, NEW.status_entry_at
          FROM tracker_status_history h WHERE h.tracker_id = NEW.id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1;
        RETURN NEW;
      END $$`,
    },
    /**
     * For each updated tracker whose current entry or state changed: walks the entries after the previous current one
     * in (timestamp, id) order, one event each time the state changes, then one more when the final state differs
     * from where the walk ended. The walked state follows the status rules: a storage location only while IN_STORAGE,
     * a DELIVERED entry sets the destination only when there was none.
     */
    {
      name: 'trackers_status_events',
      sql: `
      CREATE OR REPLACE FUNCTION trackers_status_events() RETURNS trigger LANGUAGE plpgsql AS $$
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
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'trackers_follow_status_entry',
      table: 'trackers',
      sql: `
      CREATE TRIGGER trackers_follow_status_entry BEFORE UPDATE OF status, storage_location_id, delivery_location_id ON trackers
        FOR EACH ROW EXECUTE FUNCTION trackers_follow_status_entry()`,
    },
    {
      name: 'trackers_status_events',
      table: 'trackers',
      sql: `
      CREATE TRIGGER trackers_status_events AFTER UPDATE ON trackers
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_status_events()`,
    },
  ],
};
