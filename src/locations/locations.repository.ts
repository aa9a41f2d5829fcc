import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, empty, join, raw, sql, type Sql } from '../infrastructure/database/db.js';
import { PreparedQueries } from '../infrastructure/database/prepared-queries.js';
import { historyPageSql, historyTotalSql, type HistorySqlInput } from './location-history.sql.js';
import {
  latestLocationLateral,
  locationPointColumns,
  type LocationPointRow,
} from '../location-reports/location-point.js';
import { LOCATION_WRITES_LOCK_KEY } from '../location-reports/location-writes-lock.js';
import { belowMinConfidenceSql, eligibleSql } from '../location-reports/location-rules.js';
import {
  float8Array,
  intArray,
  nullableFloat8Array,
  nullableIntArray,
  nullableTextArrayParam,
  timestamptzArray,
} from '../infrastructure/database/pg-arrays.js';
import type { ReportActivityStep } from '../alerts/report-activity.port.js';
import type { ReportColumns } from './report-batch.js';

export interface InsertOutcome {
  /** Trackers of the batch that exist and are in scope; reports of other trackers were skipped. */
  knownTrackerIds: number[];
  accepted: number;
  aggregated: number;
  filteredLowConfidence: number;
  filteredManufacturingRegion: number;
  /**
   * With `returnEligible`: the new eligible reports, back to back in the geofence stage's layout
   * (GeofenceQueue's CARRIED_REPORT_FIELDS; null: not asked for), and whether reports already stored were skipped.
   */
  newEligible: Float64Array | null;
  skippedStored: boolean;
}

export type HistoryGranularity = 'auto' | 'hourly' | 'daily';

export interface HistoryFilter {
  start?: Date;
  end?: Date;
  granularity: HistoryGranularity;
  order: 'asc' | 'desc';
  skip: number;
  limit: number;
}

/**
 * Upsert of one aggregate table from the batch's newly inserted eligible reports.
 * DISTINCT ON keeps one row per (tracker, bucket) so the statement never touches a row twice, and
 * sorts them so concurrent batches lock rows in the same order (no deadlock cycles). The WHERE
 * keeps the row with the greatest (reported_at, report_id): a late, older report never overwrites
 * a newer one, and concurrent batches end with the same winner as a serial run because the
 * condition is re-checked against the latest committed row version.
 */
function aggregateUpsert(
  table: 'location_history_hourly' | 'location_history_daily',
  unit: 'hour' | 'day',
  from: Sql,
): Sql {
  return sql`
    INSERT INTO ${raw(table)} AS cur (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
    SELECT DISTINCT ON (r.tracker_id, bucket)
           r.tracker_id, date_trunc(${raw(`'${unit}'`)}, r.timestamp, 'UTC') AS bucket, r.id, r.timestamp, r.latitude, r.longitude, r.confidence
      FROM ${from}
     ORDER BY r.tracker_id, bucket, r.timestamp DESC, r.id DESC
    ON CONFLICT (tracker_id, bucket) DO UPDATE
       SET report_id = EXCLUDED.report_id, reported_at = EXCLUDED.reported_at,
           latitude = EXCLUDED.latitude, longitude = EXCLUDED.longitude, confidence = EXCLUDED.confidence
     WHERE (EXCLUDED.reported_at, EXCLUDED.report_id) > (cur.reported_at, cur.report_id)`;
}

/** Comma-separated numbers (NaN included) into one Float64Array; null or empty: none. */
function parseNumbers(text: string | null): Float64Array {
  if (!text) return new Float64Array(0);
  const parts = text.split(',');
  const out = new Float64Array(parts.length);
  for (let i = 0; i < parts.length; i++) out[i] = Number(parts[i]);
  return out;
}

/** SQL of location reports and their hourly/daily aggregates. */
@Injectable()
export class LocationsRepository {
  constructor(
    private readonly db: Db,
    private readonly prepared: PreparedQueries,
  ) {}

  /**
   * Stores a batch and maintains both aggregates in ONE statement (so one round trip): the raw
   * insert skips duplicates (same tracker, timestamp, position — already stored or earlier in the
   * batch: the first occurrence wins) and returns only the new rows, which then feed the two
   * upserts. Reports of unknown or out-of-scope trackers are left out and reported back through
   * `knownTrackerIds`. Rows are inserted in key order so concurrent batches carrying the same
   * reports wait on each other instead of deadlocking. `returnEligible`: the statement also returns
   * the new eligible rows (in the order of GeofenceQueue's CARRIED_REPORT_FIELDS) and whether it skipped reports already stored.
   *
   * `activityStep`: the alerts' report-activity step (ReportActivityUpkeep) for a relation of new
   * reports; it is fed the inserted rows only, so a duplicate reaches no alert.
   *
   * Runs in the caller's transaction. A tracker cannot be deleted (or rebuilt) while its reports go
   * in: LOCATION_WRITES_LOCK_KEY is taken shared first, in a statement of its own, so the batch
   * statement's snapshot sees every delete that committed before (location-writes-lock.ts). That is
   * the integrity check the per-row foreign keys used to make (migration 1763720000000).
   */
  async insertBatch(
    scope: AccessScope,
    reports: ReportColumns,
    returnEligible: boolean,
    activityStep: (newReports: Sql) => ReportActivityStep | null,
  ): Promise<InsertOutcome> {
    const activity = activityStep(raw('inserted'));
    type OutcomeRow = {
      known_tracker_ids: number[];
      accepted: number;
      aggregated: number;
      filtered_low_confidence: number;
      filtered_manufacturing_region: number;
      new_eligible?: string | null;
      skipped_stored?: boolean;
    };
    // Whether reports already stored were skipped: only asked (a lazily run subquery) when the batch
    // stored fewer rows than it carried for known trackers, which duplicates within it explain too.
    const eligibleColumns = returnEligible
      ? sql`,
             (SELECT string_agg(concat_ws(',', r.id, r.tracker_id, (extract(epoch FROM r.timestamp) * 1000000)::bigint,
                                          r.latitude, r.longitude, coalesce(r.accuracy_m::text, 'NaN')), ',')
                FROM inserted r WHERE r.eligible) AS new_eligible,
             CASE WHEN count(*) < (SELECT count(*) FROM input i JOIN known k ON k.id = i.tracker_id)
                  THEN (SELECT count(*) FROM (SELECT DISTINCT i.tracker_id, i.timestamp, i.latitude, i.longitude
                                                FROM input i JOIN known k ON k.id = i.tracker_id) d) > count(*)
                  ELSE false END AS skipped_stored`
      : empty;
    const statement = sql`
      WITH input AS (
        SELECT u.*
          FROM unnest(${intArray(reports.trackerId)}, ${timestamptzArray(reports.timestamp)}, ${float8Array(reports.latitude)},
                      ${float8Array(reports.longitude)}, ${intArray(reports.confidence)}, ${nullableFloat8Array(reports.accuracyM)},
                      ${nullableTextArrayParam(reports.source)}, ${nullableIntArray(reports.battery)})
               WITH ORDINALITY AS u(tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, battery, ord)
      ),
      known AS (
        SELECT t.id FROM trackers t WHERE t.id IN (SELECT DISTINCT tracker_id FROM input) AND ${scope.visibleTracker('t.id')}
      ),
      inserted AS (
        INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, battery, eligible)
        SELECT i.tracker_id, i.timestamp, i.latitude, i.longitude, i.confidence, i.accuracy_m, i.source, i.battery,
               ${eligibleSql('i.latitude', 'i.longitude', 'i.confidence')}
          FROM input i JOIN known k ON k.id = i.tracker_id
         ORDER BY i.tracker_id, i.timestamp, i.latitude, i.longitude, i.ord
        ON CONFLICT (tracker_id, timestamp, latitude, longitude) DO NOTHING
        RETURNING id, tracker_id, timestamp, latitude, longitude, accuracy_m, confidence, eligible, battery
      ),
      hourly AS (${aggregateUpsert('location_history_hourly', 'hour', sql`inserted r WHERE r.eligible`)}),
      daily AS (${aggregateUpsert('location_history_daily', 'day', sql`inserted r WHERE r.eligible`)})${activity ? sql`,${activity.ctes}` : empty}
      SELECT (SELECT coalesce(array_agg(id), '{}') FROM known) AS known_tracker_ids,
             count(*)::int AS accepted,
             count(*) FILTER (WHERE eligible)::int AS aggregated,
             count(*) FILTER (WHERE ${belowMinConfidenceSql('confidence')})::int AS filtered_low_confidence,
             count(*) FILTER (WHERE NOT eligible AND NOT ${belowMinConfidenceSql('confidence')})::int AS filtered_manufacturing_region${eligibleColumns}${activity ? sql`, ${activity.column}` : empty}
        FROM inserted`;
    await this.db.execute(sql`SELECT pg_advisory_xact_lock_shared(${LOCATION_WRITES_LOCK_KEY})`);
    const row = await this.db.one<OutcomeRow>(statement);
    return {
      knownTrackerIds: row.known_tracker_ids,
      accepted: row.accepted,
      aggregated: row.aggregated,
      filteredLowConfidence: row.filtered_low_confidence,
      filteredManufacturingRegion: row.filtered_manufacturing_region,
      newEligible: returnEligible ? parseNumbers(row.new_eligible ?? null) : null,
      skippedStored: row.skipped_stored ?? false,
    };
  }

  /** Whether the tracker exists and is in scope (the tracker route answers 404 otherwise). */
  async trackerVisible(scope: AccessScope, trackerId: number): Promise<boolean> {
    const row = await this.db.first(
      sql`SELECT 1 FROM trackers t WHERE t.id = ${trackerId} AND ${scope.visibleTracker('t.id')}`,
    );
    return row !== null;
  }

  /**
   * One page of a tracker's history plus its exact total, in one statement (one snapshot, one round
   * trip). No row at all means the tracker does not exist or is not visible. The total sits in a
   * fenced LATERAL (OFFSET 0): pulled up, the planner would evaluate it once per page row.
   * Lag-tolerant (a replica when one is available); a tracker the replica does not show yet is
   * looked up on the primary before answering 404.
   */
  async historyPage(
    scope: AccessScope,
    trackerId: number,
    filter: HistoryFilter,
  ): Promise<{ total: number; rows: LocationPointRow[] } | null> {
    const direction = filter.order === 'asc' ? 'ASC' : 'DESC';
    const input: HistorySqlInput = {
      granularity: filter.granularity,
      trackerId: raw('t.id'),
      start: filter.start,
      end: filter.end,
      direction,
      limit: filter.limit,
      offset: filter.skip,
    };
    const rows = await this.prepared.replica.rows<LocationPointRow & { total: number }>(
      sql`
      SELECT c.total, ${locationPointColumns('p')}
        FROM trackers t
        CROSS JOIN LATERAL (SELECT (${historyTotalSql(input)})::int AS total OFFSET 0) c
        LEFT JOIN LATERAL (${historyPageSql(input)}) p ON TRUE
       WHERE t.id = ${trackerId} AND ${scope.visibleTracker('t.id')}
       ORDER BY p.bucket ${raw(direction)}`,
      { emptyAsksPrimary: true },
    );
    if (rows.length === 0) return null;
    return { total: rows[0].total, rows: rows[0].bucket === null ? [] : rows };
  }

  /** Latest eligible location of each visible tracker among `trackerIds` (absent: none). */
  async latestLocations(
    scope: AccessScope,
    trackerIds: readonly number[],
    options: { tolerateLag?: boolean } = {},
  ): Promise<Map<number, LocationPointRow>> {
    const rows = await (options.tolerateLag ? this.db.replica : this.db).rows<
      LocationPointRow & { tracker_id: number }
    >(
      sql`SELECT ids.id AS tracker_id, ll.*
         FROM (SELECT DISTINCT unnest(${intArray(trackerIds)}) AS id) ids
         JOIN LATERAL (${latestLocationLateral('ids.id')}) ll ON TRUE
        WHERE ${scope.visibleTracker('ids.id')}`,
    );
    return new Map(rows.map((row) => [row.tracker_id, row]));
  }

  /** Ids of the trackers a rebuild covers (all visible ones, or the one asked for), ascending. */
  async trackerIdsForRebuild(scope: AccessScope, trackerId?: number): Promise<number[]> {
    const conditions = [scope.visibleTracker('t.id')];
    if (trackerId !== undefined) conditions.push(sql`t.id = ${trackerId}`);
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT t.id FROM trackers t WHERE ${join(conditions, ' AND ')} ORDER BY t.id`,
    );
    return rows.map((row) => row.id);
  }

  /**
   * Recomputes eligibility and both aggregates of some trackers from their raw reports; the caller
   * runs it in a transaction of its own. `keepPrunedWinners` (raw retention on): rows whose report
   * no longer exists are kept rather than recomputed from what retention left. The tracker rows
   * are locked first (in id order; a concurrent delete of one of them finishes first), then
   * LOCATION_WRITES_LOCK_KEY
   * exclusively: in-flight batches finish before the rebuild and later ones wait until after it, so
   * no report slips between the delete and the re-insert. Rows first, then the key — the order a
   * tracker delete takes them in (its trigger takes the key), so the two cannot deadlock.
   */
  async rebuildTrackers(scope: AccessScope, trackerIds: readonly number[], keepPrunedWinners: boolean): Promise<void> {
    const ids = intArray(trackerIds);
    await this.db.rows(
      sql`SELECT t.id FROM trackers t WHERE t.id = ANY(${ids}) AND ${scope.visibleTracker('t.id')} ORDER BY t.id FOR UPDATE OF t`,
    );
    await this.db.execute(sql`SELECT pg_advisory_xact_lock(${LOCATION_WRITES_LOCK_KEY})`);
    const eligible = eligibleSql('latitude', 'longitude', 'confidence');
    await this.db.execute(
      sql`UPDATE location_reports SET eligible = ${eligible} WHERE tracker_id = ANY(${ids}) AND eligible IS DISTINCT FROM ${eligible}`,
    );
    // With raw retention on, a row whose winning report was pruned is the only record left of its
    // bucket: it stays, and the upsert below replaces it only with a newer report. The report's
    // timestamp (the row's reported_at) picks the one partition its id can be in.
    const prunedGuard = keepPrunedWinners
      ? sql`AND EXISTS (SELECT 1 FROM location_reports r WHERE r.id = h.report_id AND r.timestamp = h.reported_at)`
      : empty;
    // Daily rows go first and come back last: the triggers that recount each day's hours
    // (hourly_buckets) then count once, on the final rows, instead of on rows about to go.
    await this.db.execute(sql`DELETE FROM location_history_daily h WHERE h.tracker_id = ANY(${ids}) ${prunedGuard}`);
    await this.db.execute(sql`DELETE FROM location_history_hourly h WHERE h.tracker_id = ANY(${ids}) ${prunedGuard}`);
    const eligibleReports = sql`location_reports r WHERE r.tracker_id = ANY(${ids}) AND r.eligible`;
    await this.db.execute(aggregateUpsert('location_history_hourly', 'hour', eligibleReports));
    await this.db.execute(aggregateUpsert('location_history_daily', 'day', eligibleReports));
  }
}
