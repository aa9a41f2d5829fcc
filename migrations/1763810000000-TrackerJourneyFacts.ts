import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Journey facts per tracker, maintained by triggers on tracker_status_history, so production-run
 * analytics aggregate one stored row per tracker instead of windowing every status entry.
 *
 * A facts row summarises all of a tracker's entries, ordered by (timestamp, id). It holds for an
 * `as_of` at or after the tracker's last entry (`last_at`): then every entry counts and only the
 * intervals still open (the last entry's, and a first DELIVERED entry that is the last one) depend
 * on `as_of`; the request computes those. For an earlier `as_of` the request computes that tracker
 * from its entries, as before. A tracker without entries has no row.
 *
 * Kept exact by statement-level triggers (INSERT, UPDATE, DELETE with transition tables, TRUNCATE):
 * whatever writes entries — a manual entry, an import, the geofence automation replacing its
 * entries, a tracker delete cascading — the touched trackers' rows are recomputed from their
 * entries in the same statement. Writers of a tracker's entries hold that tracker's row lock, so
 * two recomputes of one tracker never interleave. Closed storage visits are stored as final JSON
 * text with the location's name, so renaming a storage location recomputes the trackers that
 * visited it (a rare, bounded operation).
 *
 * Columns (instants also as epoch seconds, float8 exactly as date_part('epoch', …) gives them, so
 * a request does arithmetic only):
 *  - last_at, first_epoch, last_epoch, last_status, last_storage_location_id: the first and the
 *    last entry (the last one's interval is open at as_of);
 *  - delivered_epoch, delivered_until_epoch, delivered_location_id: the first DELIVERED entry, the
 *    entry after it (null: it is the last entry, open at as_of) and its location;
 *  - visit_count: IN_STORAGE entries (the last one open when last_status is IN_STORAGE);
 *  - closed_storage_seconds, closed_visit_location_ids, closed_visit_seconds: the visits the next
 *    entry closed, in order: their summed seconds (null when none), per visit location and seconds;
 *  - visits_json: the API's storage_location_visits objects joined by ',' — the closed ones whole,
 *    then an open one up to its `"duration_days":`, which the request appends.
 */
const REFRESH_FUNCTION = `
  CREATE FUNCTION tracker_journey_facts_refresh(ids integer[]) RETURNS void LANGUAGE plpgsql
  -- Planned once per connection: a single status write would otherwise spend milliseconds
  -- planning these statements for microseconds of work.
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
             '","departed_at":null,"duration_days":') END)
      FROM (
        SELECT e.tracker_id,
               MAX(e.timestamp) AS last_at,
               MIN(e.epoch) AS first_epoch,
               MAX(e.epoch) AS last_epoch,
               MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS last_status,
               MIN(e.storage_location_id) FILTER (WHERE e.next_at IS NULL) AS last_storage_location_id,
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
                 '","duration_days":', floor(e.seconds / 864.0 + 0.5) / 100, '}'),
                 ',' ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_visits_json
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
      visits_json = excluded.visits_json;
  END $$;`;

export class TrackerJourneyFacts1763810000000 implements MigrationInterface {
  name = 'TrackerJourneyFacts1763810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tracker_journey_facts (
        tracker_id                 integer PRIMARY KEY,
        last_at                    timestamptz NOT NULL,
        first_epoch                double precision NOT NULL,
        last_epoch                 double precision NOT NULL,
        last_status                text NOT NULL,
        last_storage_location_id   integer,
        delivered_epoch            double precision,
        delivered_until_epoch      double precision,
        delivered_location_id      integer,
        visit_count                integer NOT NULL,
        closed_storage_seconds     double precision,
        closed_visit_location_ids  integer[],
        closed_visit_seconds       double precision[],
        visits_json                text NOT NULL
      ) WITH (fillfactor = 90)`);
    await q.query(REFRESH_FUNCTION);
    await q.query(`
      CREATE FUNCTION tracker_journey_facts_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(SELECT DISTINCT tracker_id FROM new_entries ORDER BY 1));
        RETURN NULL;
      END $$;
      CREATE FUNCTION tracker_journey_facts_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(
          SELECT tracker_id FROM old_entries UNION SELECT tracker_id FROM new_entries ORDER BY 1));
        RETURN NULL;
      END $$;
      CREATE FUNCTION tracker_journey_facts_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(SELECT DISTINCT tracker_id FROM old_entries ORDER BY 1));
        RETURN NULL;
      END $$;
      CREATE FUNCTION tracker_journey_facts_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE tracker_journey_facts;
        RETURN NULL;
      END $$;
      CREATE TRIGGER tracker_journey_facts_insert AFTER INSERT ON tracker_status_history
        REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_insert();
      CREATE TRIGGER tracker_journey_facts_update AFTER UPDATE ON tracker_status_history
        REFERENCING OLD TABLE AS old_entries NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_update();
      CREATE TRIGGER tracker_journey_facts_delete AFTER DELETE ON tracker_status_history
        REFERENCING OLD TABLE AS old_entries FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_delete();
      CREATE TRIGGER tracker_journey_facts_truncate AFTER TRUNCATE ON tracker_status_history
        FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_truncate();

      -- Closed visits carry the storage location's name: a rename recomputes its visitors.
      CREATE FUNCTION tracker_journey_facts_on_storage_rename() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(
          SELECT DISTINCT h.tracker_id
            FROM new_places n JOIN old_places o ON o.id = n.id AND o.name IS DISTINCT FROM n.name
            JOIN tracker_status_history h ON h.storage_location_id = n.id
           WHERE h.status = 'IN_STORAGE' ORDER BY 1));
        RETURN NULL;
      END $$;
      CREATE TRIGGER tracker_journey_facts_storage_rename AFTER UPDATE ON storage_locations
        REFERENCING OLD TABLE AS old_places NEW TABLE AS new_places
        FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_storage_rename();
    `);
    // Back-fill every tracker with entries, in slices so no statement holds too much in memory.
    await q.query(`
      DO $$
      DECLARE
        low integer := 0;
        high integer := (SELECT COALESCE(MAX(tracker_id), 0) FROM tracker_status_history);
      BEGIN
        WHILE low <= high LOOP
          PERFORM tracker_journey_facts_refresh(ARRAY(
            SELECT DISTINCT tracker_id FROM tracker_status_history WHERE tracker_id >= low AND tracker_id < low + 50000 ORDER BY 1));
          low := low + 50000;
        END LOOP;
      END $$`);
    await q.query(`ANALYZE tracker_journey_facts`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER tracker_journey_facts_storage_rename ON storage_locations;
      DROP TRIGGER tracker_journey_facts_insert ON tracker_status_history;
      DROP TRIGGER tracker_journey_facts_update ON tracker_status_history;
      DROP TRIGGER tracker_journey_facts_delete ON tracker_status_history;
      DROP TRIGGER tracker_journey_facts_truncate ON tracker_status_history;
      DROP FUNCTION tracker_journey_facts_on_storage_rename();
      DROP FUNCTION tracker_journey_facts_on_insert();
      DROP FUNCTION tracker_journey_facts_on_update();
      DROP FUNCTION tracker_journey_facts_on_delete();
      DROP FUNCTION tracker_journey_facts_on_truncate();
      DROP FUNCTION tracker_journey_facts_refresh(integer[]);
      DROP TABLE tracker_journey_facts;
    `);
  }
}
