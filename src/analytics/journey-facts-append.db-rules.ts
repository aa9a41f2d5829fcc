import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * Inserted status entries: when all of a tracker's new entries sort after its facts row's last entry (by (timestamp,
 * id)), the row is updated from its stored values and the new entries alone, to exactly what the recomputation would
 * store; the one entry of a tracker that had none (a created or imported tracker) is written as its row directly; other
 * trackers are recomputed. Separate statements, so the usual insert (one entry per tracker) runs only the small ones,
 * and a bulk load of new trackers never reads the history back.
 */
export const JOURNEY_FACT_APPEND_RULES: DatabaseRules = {
  functions: [
    {
      name: 'tracker_journey_facts_on_insert',
      sql: `
  CREATE OR REPLACE FUNCTION tracker_journey_facts_on_insert() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
  DECLARE
    rest integer[];
  BEGIN
    
    WITH firsts AS (
      SELECT DISTINCT ON (n.tracker_id) n.*, count(*) OVER (PARTITION BY n.tracker_id) AS entries
        FROM new_entries n ORDER BY n.tracker_id, n.timestamp, n.id
    ), appended AS (
      SELECT s.*, date_part('epoch', s.timestamp) AS epoch, f.last_id AS prior_id, f.last_status AS prior_status, f.last_at AS prior_at,
             f.last_storage_location_id AS prior_storage_location_id, f.last_epoch AS prior_epoch
        FROM firsts s JOIN tracker_journey_facts f ON f.tracker_id = s.tracker_id AND (s.timestamp, s.id) > (f.last_at, f.last_id) AND s.entries = 1
    ), g AS (
      -- One new entry (the usual case): it is the last one, and the previous one's interval ends at it.
      SELECT a.tracker_id, a.timestamp AS last_at, a.epoch AS last_epoch, a.status AS last_status,
             a.storage_location_id AS last_storage_location_id, a.id AS last_id,
             a.epoch - a.prior_epoch AS prior_seconds, a.timestamp AS prior_until,
             CASE WHEN a.status = 'DELIVERED' THEN a.epoch END AS delivered_epoch,
             NULL::double precision AS delivered_until_epoch,
             CASE WHEN a.status = 'DELIVERED' THEN a.delivery_location_id END AS delivered_location_id,
             (a.status = 'IN_STORAGE')::int AS visits,
             CASE WHEN a.prior_status = 'IN_STORAGE' THEN ARRAY[a.prior_storage_location_id] END AS closed_ids,
             CASE WHEN a.prior_status = 'IN_STORAGE' THEN ARRAY[a.epoch - a.prior_epoch] END AS closed_seconds,
             NULL::text AS closed_json
        FROM appended a
    ), done AS (
      UPDATE tracker_journey_facts f SET
        last_at = g.last_at, last_epoch = g.last_epoch, last_status = g.last_status,
        last_storage_location_id = g.last_storage_location_id, last_id = g.last_id,
        delivered_epoch = COALESCE(f.delivered_epoch, g.delivered_epoch),
        delivered_until_epoch = CASE WHEN f.delivered_epoch IS NULL THEN g.delivered_until_epoch
                                     ELSE COALESCE(f.delivered_until_epoch, date_part('epoch', g.prior_until)) END,
        delivered_location_id = CASE WHEN f.delivered_epoch IS NULL THEN g.delivered_location_id ELSE f.delivered_location_id END,
        visit_count = f.visit_count + g.visits,
        closed_storage_seconds = (SELECT SUM(u.v ORDER BY u.i) FROM unnest(ARRAY[f.closed_storage_seconds] || g.closed_seconds) WITH ORDINALITY u(v, i)),
        closed_visit_location_ids = f.closed_visit_location_ids || g.closed_ids,
        closed_visit_seconds = f.closed_visit_seconds || g.closed_seconds,
        visits_json = concat_ws(',',
          CASE WHEN f.last_status = 'IN_STORAGE' THEN concat(left(f.visits_json, -21),
                 '"', to_char(g.prior_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '","duration_days":', floor(g.prior_seconds / 864.0 + 0.5) / 100, '}')
               ELSE NULLIF(f.visits_json, '') END,
          g.closed_json,
          CASE WHEN g.last_status = 'IN_STORAGE' THEN concat(
            '{"storage_location_id":', COALESCE(g.last_storage_location_id::text, 'null'),
            ',"location_name":', to_json(COALESCE(osl.name, '')),
            ',"arrived_at":"', to_char(g.last_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            '","departed_at":null,"duration_days":') END)
        FROM g LEFT JOIN storage_locations osl ON osl.id = g.last_storage_location_id
       WHERE f.tracker_id = g.tracker_id
      RETURNING f.tracker_id
    )
    SELECT ARRAY(SELECT DISTINCT n.tracker_id FROM new_entries n WHERE NOT EXISTS (SELECT 1 FROM done d WHERE d.tracker_id = n.tracker_id) ORDER BY 1)
      INTO rest;
    IF cardinality(rest) = 0 THEN
      RETURN NULL;
    END IF;
    
    WITH fresh AS (
      -- One new entry of a tracker without a facts row (a new tracker: a row exists for every tracker with entries)
      -- is its whole history. Trackers that have a row after all conflict and are recomputed below.
      INSERT INTO tracker_journey_facts AS f (tracker_id, last_at, first_epoch, last_epoch, last_status, last_storage_location_id,
             delivered_epoch, delivered_until_epoch, delivered_location_id, visit_count, closed_storage_seconds,
             closed_visit_location_ids, closed_visit_seconds, visits_json, last_id, production_run_id)
      SELECT s.tracker_id, s.timestamp, s.epoch, s.epoch, s.status, s.storage_location_id,
             CASE WHEN s.status = 'DELIVERED' THEN s.epoch END, NULL,
             CASE WHEN s.status = 'DELIVERED' THEN s.delivery_location_id END,
             (s.status = 'IN_STORAGE')::int, NULL, NULL, NULL,
             CASE WHEN s.status = 'IN_STORAGE' THEN concat(
               '{"storage_location_id":', COALESCE(s.storage_location_id::text, 'null'),
               ',"location_name":', to_json(COALESCE(osl.name, '')),
               ',"arrived_at":"', to_char(s.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               '","departed_at":null,"duration_days":') ELSE '' END,
             s.id, t.production_run_id
        FROM (SELECT n.*, date_part('epoch', n.timestamp) AS epoch, count(*) OVER (PARTITION BY n.tracker_id) AS entries
                FROM new_entries n JOIN unnest(rest) r(id) ON r.id = n.tracker_id) s
        JOIN trackers t ON t.id = s.tracker_id
        LEFT JOIN storage_locations osl ON osl.id = s.storage_location_id
       WHERE s.entries = 1
      ON CONFLICT (tracker_id) DO NOTHING
      RETURNING f.tracker_id
    )
    SELECT ARRAY(SELECT r.id FROM unnest(rest) r(id) WHERE NOT EXISTS (SELECT 1 FROM fresh d WHERE d.tracker_id = r.id) ORDER BY 1)
      INTO rest;
    IF cardinality(rest) = 0 THEN
      RETURN NULL;
    END IF;
    
    WITH firsts AS (
      SELECT DISTINCT ON (n.tracker_id) n.*, count(*) OVER (PARTITION BY n.tracker_id) AS entries
        FROM new_entries n JOIN unnest(rest) r(id) ON r.id = n.tracker_id ORDER BY n.tracker_id, n.timestamp, n.id
    ), appended AS (
      SELECT s.*, date_part('epoch', s.timestamp) AS epoch, f.last_id AS prior_id, f.last_status AS prior_status, f.last_at AS prior_at,
             f.last_storage_location_id AS prior_storage_location_id, f.last_epoch AS prior_epoch
        FROM firsts s JOIN tracker_journey_facts f ON f.tracker_id = s.tracker_id AND (s.timestamp, s.id) > (f.last_at, f.last_id) AND s.entries > 1
    ), w AS (
      -- The previous last entry (prior), whose interval the first new entry closes, then the new ones.
      SELECT s.*, LEAD(s.timestamp) OVER (PARTITION BY s.tracker_id ORDER BY s.timestamp, s.id) AS next_at
        FROM (SELECT a.tracker_id, a.prior_id AS id, a.prior_status AS status, a.prior_at AS timestamp,
                     a.prior_storage_location_id AS storage_location_id, NULL::integer AS delivery_location_id, a.prior_epoch AS epoch, true AS prior
                FROM appended a
              UNION ALL
              SELECT n.tracker_id, n.id, n.status, n.timestamp, n.storage_location_id, n.delivery_location_id, date_part('epoch', n.timestamp), false
                FROM new_entries n JOIN appended a ON a.tracker_id = n.tracker_id) s
    ), g AS (
      SELECT e.tracker_id,
             MAX(e.timestamp) AS last_at,
             MAX(e.epoch) AS last_epoch,
             MIN(e.status) FILTER (WHERE e.next_at IS NULL) AS last_status,
             MIN(e.storage_location_id) FILTER (WHERE e.next_at IS NULL) AS last_storage_location_id,
             MIN(e.id) FILTER (WHERE e.next_at IS NULL) AS last_id,
             MIN(e.seconds) FILTER (WHERE e.prior) AS prior_seconds,
             MIN(e.next_at) FILTER (WHERE e.prior) AS prior_until,
             (array_agg(e.epoch ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'DELIVERED' AND NOT e.prior))[1] AS delivered_epoch,
             (array_agg(date_part('epoch', e.next_at) ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'DELIVERED' AND NOT e.prior))[1] AS delivered_until_epoch,
             (array_agg(e.delivery_location_id ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'DELIVERED' AND NOT e.prior))[1] AS delivered_location_id,
             COUNT(*) FILTER (WHERE e.status = 'IN_STORAGE' AND NOT e.prior)::int AS visits,
             array_agg(e.storage_location_id ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_ids,
             array_agg(e.seconds ORDER BY e.timestamp, e.id) FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL) AS closed_seconds,
             string_agg(concat(
                 '{"storage_location_id":', COALESCE(e.storage_location_id::text, 'null'),
                 ',"location_name":', to_json(COALESCE(sl.name, '')),
                 ',"arrived_at":"', to_char(e.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 '","departed_at":"', to_char(e.next_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 '","duration_days":', floor(e.seconds / 864.0 + 0.5) / 100, '}'), ',' ORDER BY e.timestamp, e.id)
               FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL AND NOT e.prior) AS closed_json
        FROM (SELECT w.*, date_part('epoch', w.next_at) - w.epoch AS seconds FROM w) e
        LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id AND NOT e.prior
       GROUP BY e.tracker_id
    ), done AS (
      UPDATE tracker_journey_facts f SET
        last_at = g.last_at, last_epoch = g.last_epoch, last_status = g.last_status,
        last_storage_location_id = g.last_storage_location_id, last_id = g.last_id,
        delivered_epoch = COALESCE(f.delivered_epoch, g.delivered_epoch),
        delivered_until_epoch = CASE WHEN f.delivered_epoch IS NULL THEN g.delivered_until_epoch
                                     ELSE COALESCE(f.delivered_until_epoch, date_part('epoch', g.prior_until)) END,
        delivered_location_id = CASE WHEN f.delivered_epoch IS NULL THEN g.delivered_location_id ELSE f.delivered_location_id END,
        visit_count = f.visit_count + g.visits,
        closed_storage_seconds = (SELECT SUM(u.v ORDER BY u.i) FROM unnest(ARRAY[f.closed_storage_seconds] || g.closed_seconds) WITH ORDINALITY u(v, i)),
        closed_visit_location_ids = f.closed_visit_location_ids || g.closed_ids,
        closed_visit_seconds = f.closed_visit_seconds || g.closed_seconds,
        visits_json = concat_ws(',',
          CASE WHEN f.last_status = 'IN_STORAGE' THEN concat(left(f.visits_json, -21),
                 '"', to_char(g.prior_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '","duration_days":', floor(g.prior_seconds / 864.0 + 0.5) / 100, '}')
               ELSE NULLIF(f.visits_json, '') END,
          g.closed_json,
          CASE WHEN g.last_status = 'IN_STORAGE' THEN concat(
            '{"storage_location_id":', COALESCE(g.last_storage_location_id::text, 'null'),
            ',"location_name":', to_json(COALESCE(osl.name, '')),
            ',"arrived_at":"', to_char(g.last_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            '","departed_at":null,"duration_days":') END)
        FROM g LEFT JOIN storage_locations osl ON osl.id = g.last_storage_location_id
       WHERE f.tracker_id = g.tracker_id
      RETURNING f.tracker_id
    )
    SELECT ARRAY(SELECT r.id FROM unnest(rest) r(id) WHERE NOT EXISTS (SELECT 1 FROM done d WHERE d.tracker_id = r.id) ORDER BY 1)
      INTO rest;
    IF cardinality(rest) > 0 THEN
      PERFORM tracker_journey_facts_refresh(rest);
    END IF;
    RETURN NULL;
  END $$`,
    },
  ],
  triggers: [
    {
      name: 'tracker_journey_facts_insert',
      table: 'tracker_status_history',
      sql: `
      CREATE TRIGGER tracker_journey_facts_insert AFTER INSERT ON tracker_status_history
        REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION tracker_journey_facts_on_insert()`,
    },
  ],
};
