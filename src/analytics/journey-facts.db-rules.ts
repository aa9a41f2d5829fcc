import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * Journey facts: one row per tracker summarising its status entries, so run analytics aggregate stored rows instead
 * of windowing every entry. Statement triggers keep them exact for every writer of entries; appended entries take the
 * incremental path (journey-facts-append.db-rules.ts), everything else recomputes the touched trackers from all their
 * entries.
 */
export const JOURNEY_FACT_RULES: DatabaseRules = {
  functions: [
    /**
     * Recomputes the given trackers' rows from all their entries. Planned once per connection: a single status write
     * would otherwise spend milliseconds planning these statements for microseconds of work.
     */
    {
      name: 'tracker_journey_facts_refresh',
      sql: `
  CREATE OR REPLACE FUNCTION tracker_journey_facts_refresh(ids integer[]) RETURNS void LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
  BEGIN
    DELETE FROM tracker_journey_facts f
     WHERE f.tracker_id = ANY(ids) AND NOT EXISTS (SELECT 1 FROM tracker_status_history h WHERE h.tracker_id = f.tracker_id);
    INSERT INTO tracker_journey_facts AS f
    SELECT g.tracker_id, g.last_at, g.first_epoch, g.last_epoch, g.last_status, g.last_storage_location_id, g.delivered_epoch, g.delivered_until_epoch,
           g.delivered_location_id, g.visit_count, g.closed_storage_seconds, g.closed_visit_location_ids, g.closed_visit_seconds,
           concat_ws(',', g.closed_visits_json, CASE WHEN g.last_status = 'IN_STORAGE' THEN concat(
             '{"storage_location_id":', COALESCE(g.last_storage_location_id::text, 'null'),
             ',"location_name":', to_json(COALESCE(osl.name, '')),
             ',"arrived_at":"', to_char(g.last_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             '","departed_at":null,"duration_days":') END), g.last_id
      FROM (
        SELECT e.tracker_id,
               MAX(e.timestamp) AS last_at,
               MIN(e.epoch) AS first_epoch,
               MAX(e.epoch) AS last_epoch,
               MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS last_status,
               MIN(e.storage_location_id) FILTER (WHERE e.next_at IS NULL) AS last_storage_location_id,
               MIN(e.id) FILTER (WHERE e.next_at IS NULL) AS last_id,
               (array_agg(e.epoch ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'DELIVERED'))[1] AS delivered_epoch,
               (array_agg(date_part('epoch', e.next_at) ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'DELIVERED'))[1] AS delivered_until_epoch,
               (array_agg(e.delivery_location_id ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'DELIVERED'))[1] AS delivered_location_id,
               COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE')::int AS visit_count,
               SUM(e.seconds) FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_storage_seconds,
               array_agg(e.storage_location_id ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_visit_location_ids,
               array_agg(e.seconds ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_visit_seconds,
               string_agg(concat(
                 '{"storage_location_id":', COALESCE(e.storage_location_id::text, 'null'),
                 ',"location_name":', to_json(COALESCE(sl.name, '')),
                 ',"arrived_at":"', to_char(e.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 '","departed_at":"', to_char(e.next_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 '","duration_days":', floor(e.seconds / 864.0 + 0.5) / 100, '}'), ',' ORDER BY e.timestamp, e.id)
                 FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_visits_json
          FROM (SELECT w.*, date_part('epoch', w.timestamp) AS epoch,
                       date_part('epoch', w.next_at) - date_part('epoch', w.timestamp) AS seconds
                  FROM (SELECT h.tracker_id, h.id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
                               LEAD(h.timestamp) OVER (PARTITION BY h.tracker_id ORDER BY h.timestamp, h.id) AS next_at
                          FROM tracker_status_history h WHERE h.tracker_id = ANY(ids)) w) e
          LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id
         GROUP BY e.tracker_id
      ) g
      LEFT JOIN storage_locations osl ON osl.id = g.last_storage_location_id
    ON CONFLICT (tracker_id) DO UPDATE SET
      last_at = excluded.last_at, first_epoch = excluded.first_epoch, last_epoch = excluded.last_epoch,
      last_status = excluded.last_status, last_storage_location_id = excluded.last_storage_location_id,
      delivered_epoch = excluded.delivered_epoch,
      delivered_until_epoch = excluded.delivered_until_epoch, delivered_location_id = excluded.delivered_location_id,
      visit_count = excluded.visit_count, closed_storage_seconds = excluded.closed_storage_seconds,
      closed_visit_location_ids = excluded.closed_visit_location_ids, closed_visit_seconds = excluded.closed_visit_seconds,
      visits_json = excluded.visits_json, last_id = excluded.last_id;
  END $$`,
    },
    {
      name: 'tracker_journey_facts_on_update',
      sql: `
      CREATE OR REPLACE FUNCTION tracker_journey_facts_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(
          SELECT tracker_id FROM old_entries UNION SELECT tracker_id FROM new_entries ORDER BY 1));
        RETURN NULL;
      END $$`,
    },
    {
      name: 'tracker_journey_facts_on_delete',
      sql: `
      CREATE OR REPLACE FUNCTION tracker_journey_facts_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(SELECT DISTINCT tracker_id FROM old_entries ORDER BY 1));
        RETURN NULL;
      END $$`,
    },
    {
      name: 'tracker_journey_facts_on_truncate',
      sql: `
      CREATE OR REPLACE FUNCTION tracker_journey_facts_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE tracker_journey_facts;
        RETURN NULL;
      END $$`,
    },
    /** Closed visits carry the storage location's name: a rename recomputes its visitors. */
    {
      name: 'tracker_journey_facts_on_storage_rename',
      sql: `
      CREATE OR REPLACE FUNCTION tracker_journey_facts_on_storage_rename() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(
          SELECT DISTINCT h.tracker_id
            FROM new_places n JOIN old_places o ON o.id = n.id AND o.name IS DISTINCT FROM n.name
            JOIN tracker_status_history h ON h.storage_location_id = n.id
           WHERE h.status = 'IN_STORAGE' ORDER BY 1));
        RETURN NULL;
      END $$`,
    },
    /** Facts rows carry their tracker's production run (filled on insert when not given: the recomputation inserts positionally). */
    {
      name: 'tracker_journey_facts_set_run',
      sql: `
      CREATE OR REPLACE FUNCTION tracker_journey_facts_set_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        SELECT t.production_run_id INTO NEW.production_run_id FROM trackers t WHERE t.id = NEW.tracker_id;
        RETURN NEW;
      END $$`,
    },
    /** Keeps the facts row's run right should a tracker ever change runs. */
    {
      name: 'tracker_journey_facts_on_run_change',
      sql: `
      CREATE OR REPLACE FUNCTION tracker_journey_facts_on_run_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE tracker_journey_facts SET production_run_id = NEW.production_run_id WHERE tracker_id = NEW.id;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'tracker_journey_facts_update',
      table: 'tracker_status_history',
      sql: `
      CREATE TRIGGER tracker_journey_facts_update AFTER UPDATE ON tracker_status_history
        REFERENCING OLD TABLE AS old_entries NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_update()`,
    },
    {
      name: 'tracker_journey_facts_delete',
      table: 'tracker_status_history',
      sql: `
      CREATE TRIGGER tracker_journey_facts_delete AFTER DELETE ON tracker_status_history
        REFERENCING OLD TABLE AS old_entries FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_delete()`,
    },
    {
      name: 'tracker_journey_facts_truncate',
      table: 'tracker_status_history',
      sql: `
      CREATE TRIGGER tracker_journey_facts_truncate AFTER TRUNCATE ON tracker_status_history
        FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_truncate()`,
    },
    {
      name: 'tracker_journey_facts_storage_rename',
      table: 'storage_locations',
      sql: `
      CREATE TRIGGER tracker_journey_facts_storage_rename AFTER UPDATE ON storage_locations
        REFERENCING OLD TABLE AS old_places NEW TABLE AS new_places
        FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_storage_rename()`,
    },
    {
      name: 'tracker_journey_facts_set_run',
      table: 'tracker_journey_facts',
      sql: `
      CREATE TRIGGER tracker_journey_facts_set_run BEFORE INSERT ON tracker_journey_facts
        FOR EACH ROW WHEN (NEW.production_run_id IS NULL) EXECUTE FUNCTION tracker_journey_facts_set_run()`,
    },
    {
      name: 'tracker_journey_facts_run_change',
      table: 'trackers',
      sql: `
      CREATE TRIGGER tracker_journey_facts_run_change AFTER UPDATE OF production_run_id ON trackers
        FOR EACH ROW WHEN (OLD.production_run_id IS DISTINCT FROM NEW.production_run_id)
        EXECUTE FUNCTION tracker_journey_facts_on_run_change()`,
    },
  ],
};
