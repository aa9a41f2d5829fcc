import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Journey facts follow appended entries incrementally. A status insert whose new entries of a
 * tracker all sort after that tracker's last entry (by (timestamp, id)) — the geofence automation's
 * and a manual entry's usual case — updates the tracker's facts row from its stored values and the
 * new entries alone: the previous last entry's open interval is closed at the first new entry (a
 * storage visit gets its departure, seconds and final JSON; a first DELIVERED entry its end), the
 * new entries are summarised as the recomputation would, and the last new entry becomes the open
 * one. Every other write (updates, deletes, back-dated inserts, a tracker without a facts row, a
 * storage location rename) still recomputes the touched trackers from all their entries.
 *
 * `last_id` (the last entry's id) decides the tie at an equal timestamp, and it guards against
 * double counting: when a row already includes the new entries (another trigger of the same
 * statement recomputed it), its (last_at, last_id) is not before them, so the recomputation runs.
 *
 * The result equals the recomputation's row exactly: the same expressions on the same values
 * (epochs, seconds, duration text); closed storage seconds extend the stored sum in entry order
 * (float8 epochs of this century are multiples of 2^-22 s, so their differences and the sums of
 * these are exact, in any order); the closed part of visits_json is kept as stored (names in it are current: a rename
 * recomputes), and the visit the new entry closes keeps its stored text up to `"departed_at":`.
 */

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
/** Length of `null,"duration_days":`, the end of an open visit's stored text. */
const OPEN_VISIT_TAIL = 21;

/** The recomputation from all entries; `withLastId` also stores the last entry's id. */
function refreshFunction(withLastId: boolean): string {
  const lastId = withLastId ? ', g.last_id' : '';
  return `
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
             ',"arrived_at":"', to_char(g.last_at AT TIME ZONE 'UTC', ${ISO}),
             '","departed_at":null,"duration_days":') END)${lastId}
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
               string_agg(${closedVisitJson('e', 'sl')}, ',' ORDER BY e.timestamp, e.id)
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
      visits_json = excluded.visits_json${withLastId ? ', last_id = excluded.last_id' : ''};
  END $$;`;
}

/** A closed storage visit's JSON text: entry `e` (timestamp, next_at, seconds), location `sl`. */
function closedVisitJson(e: string, sl: string): string {
  return `concat(
                 '{"storage_location_id":', COALESCE(${e}.storage_location_id::text, 'null'),
                 ',"location_name":', to_json(COALESCE(${sl}.name, '')),
                 ',"arrived_at":"', to_char(${e}.timestamp AT TIME ZONE 'UTC', ${ISO}),
                 '","departed_at":"', to_char(${e}.next_at AT TIME ZONE 'UTC', ${ISO}),
                 '","duration_days":', floor(${e}.seconds / 864.0 + 0.5) / 100, '}')`;
}

/** Updates the facts rows of the trackers in CTE g (a summary of their appended entries) from their stored values. */
const UPDATE_FROM_SUMMARY = `
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
          CASE WHEN f.last_status = 'IN_STORAGE' THEN concat(left(f.visits_json, -${OPEN_VISIT_TAIL}),
                 '"', to_char(g.prior_until AT TIME ZONE 'UTC', ${ISO}), '","duration_days":', floor(g.prior_seconds / 864.0 + 0.5) / 100, '}')
               ELSE NULLIF(f.visits_json, '') END,
          g.closed_json,
          CASE WHEN g.last_status = 'IN_STORAGE' THEN concat(
            '{"storage_location_id":', COALESCE(g.last_storage_location_id::text, 'null'),
            ',"location_name":', to_json(COALESCE(osl.name, '')),
            ',"arrived_at":"', to_char(g.last_at AT TIME ZONE 'UTC', ${ISO}),
            '","departed_at":null,"duration_days":') END)
        FROM g LEFT JOIN storage_locations osl ON osl.id = g.last_storage_location_id
       WHERE f.tracker_id = g.tracker_id
      RETURNING f.tracker_id`;

/** Trackers' first new entries (with how many each has) that sort after their facts row's last entry. */
const APPENDED = (entries: string) => `
    WITH firsts AS (
      SELECT DISTINCT ON (n.tracker_id) n.*, count(*) OVER (PARTITION BY n.tracker_id) AS entries
        FROM ${entries} ORDER BY n.tracker_id, n.timestamp, n.id
    ), appended AS (
      SELECT s.*, date_part('epoch', s.timestamp) AS epoch, f.last_id AS prior_id, f.last_status AS prior_status, f.last_at AS prior_at,
             f.last_storage_location_id AS prior_storage_location_id, f.last_epoch AS prior_epoch
        FROM firsts s JOIN tracker_journey_facts f ON f.tracker_id = s.tracker_id AND (s.timestamp, s.id) > (f.last_at, f.last_id)`;

/*
 * Two statements, so that the usual insert (one entry per tracker) runs the small one only: trackers
 * with one appended entry; then, for the trackers left, those with several appended entries (a
 * window over them and the previous last entry); the rest are recomputed.
 */
const APPEND_FUNCTION = `
  CREATE OR REPLACE FUNCTION tracker_journey_facts_on_insert() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
  DECLARE
    rest integer[];
  BEGIN
    ${APPENDED('new_entries n')} AND s.entries = 1
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
    ), done AS (${UPDATE_FROM_SUMMARY}
    )
    SELECT ARRAY(SELECT DISTINCT n.tracker_id FROM new_entries n WHERE NOT EXISTS (SELECT 1 FROM done d WHERE d.tracker_id = n.tracker_id) ORDER BY 1)
      INTO rest;
    IF cardinality(rest) = 0 THEN
      RETURN NULL;
    END IF;
    ${APPENDED('new_entries n JOIN unnest(rest) r(id) ON r.id = n.tracker_id')} AND s.entries > 1
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
             string_agg(${closedVisitJson('e', 'sl')}, ',' ORDER BY e.timestamp, e.id)
               FILTER (WHERE e.status = 'IN_STORAGE' AND e.next_at IS NOT NULL AND NOT e.prior) AS closed_json
        FROM (SELECT w.*, date_part('epoch', w.next_at) - w.epoch AS seconds FROM w) e
        LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id AND NOT e.prior
       GROUP BY e.tracker_id
    ), done AS (${UPDATE_FROM_SUMMARY}
    )
    SELECT ARRAY(SELECT r.id FROM unnest(rest) r(id) WHERE NOT EXISTS (SELECT 1 FROM done d WHERE d.tracker_id = r.id) ORDER BY 1)
      INTO rest;
    IF cardinality(rest) > 0 THEN
      PERFORM tracker_journey_facts_refresh(rest);
    END IF;
    RETURN NULL;
  END $$;`;

export class JourneyFactsAppend1763920000000 implements MigrationInterface {
  name = 'JourneyFactsAppend1763920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tracker_journey_facts ADD COLUMN last_id bigint`);
    await q.query(`
      UPDATE tracker_journey_facts f SET last_id = (
        SELECT h.id FROM tracker_status_history h WHERE h.tracker_id = f.tracker_id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1)`);
    await q.query(`ALTER TABLE tracker_journey_facts ALTER COLUMN last_id SET NOT NULL`);
    await q.query(refreshFunction(true));
    await q.query(APPEND_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION tracker_journey_facts_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM tracker_journey_facts_refresh(ARRAY(SELECT DISTINCT tracker_id FROM new_entries ORDER BY 1));
        RETURN NULL;
      END $$`);
    await q.query(refreshFunction(false));
    await q.query(`ALTER TABLE tracker_journey_facts DROP COLUMN last_id`);
  }
}
