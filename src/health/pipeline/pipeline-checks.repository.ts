import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../../common/auth/access-scope.js';
import { Db, raw, sql } from '../../infrastructure/database/db.js';

/**
 * SQL of the pipeline health steps (the aggregate checks: aggregate-checks.repository.ts). Every
 * query is bounded — a LIMIT on an index scan, a primary-key probe per sampled row, or a TID range
 * over the last pages of a table — so the cost does not grow with the number of reports (see docs/operations.md for the trade-offs).
 *
 * Health reads the whole system, so only an admin scope is accepted (the routes are admin-only);
 * asking with a narrower scope is a programming error, not a filter.
 */

/** Tables the service cannot work without (the location_history view is checked separately). */
export const REQUIRED_TABLES = [
  'users',
  'revoked_tokens',
  'clients',
  'brands',
  'production_runs',
  'storage_locations',
  'delivery_locations',
  'trackers',
  'tracker_status_history',
  'location_reports',
  'location_history_hourly',
  'location_history_daily',
  'images',
] as const;

export const HISTORY_RELATIONS = ['location_history_hourly', 'location_history_daily', 'location_history'] as const;
export type HistoryRelation = (typeof HISTORY_RELATIONS)[number];

/** Longest any single step query may run; a slow step fails instead of holding a connection. */
export const STEP_STATEMENT_TIMEOUT_MS = 5000;
/** Queued geofence marks (tracker × row) check_geofence_processing reads at most, oldest first. */
export const GEOFENCE_BACKLOG_SCAN = 100_000;

export interface PolicyRow {
  hourly_bucket_key: boolean;
  daily_bucket_key: boolean;
  report_dedup_key: boolean;
  history_cutoff_function: boolean;
}

export interface FreshnessRow {
  sampled_reports: number;
  eligible_reports: number;
  stale_hourly: number;
  stale_daily: number;
  newest_received_at: Date | null;
  examples:
    { report_id: string; tracker_id: number; timestamp: string; hourly: string | null; daily: string | null }[] | null;
}

export interface StatusConsistencyRow {
  sampled_trackers: number;
  without_history: number;
  mismatched: number;
  examples: { tracker_id: number; status: string; latest_entry_status: string }[] | null;
}

@Injectable()
export class PipelineChecksRepository {
  constructor(private readonly db: Db) {}

  async ping(scope: AccessScope): Promise<{ server_version: string }> {
    return readOnlyStep(this.db, scope, async () => {
      const row = await this.db.one<{ server_version: string }>(
        sql`SELECT 1 AS ok, current_setting('server_version') AS server_version`,
      );
      return { server_version: row.server_version };
    });
  }

  /** Presence of each required table in the current schema (catalog lookups only). */
  async tablesPresent(scope: AccessScope): Promise<Record<string, boolean>> {
    return readOnlyStep(this.db, scope, async () => {
      const rows = await this.db.rows<{ name: string; present: boolean }>(
        sql`SELECT name, EXISTS (
                  SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = name AND c.relkind IN ('r', 'p')
                ) AS present
           FROM unnest(${REQUIRED_TABLES}::text[]) AS name`,
      );
      return Object.fromEntries(rows.map((r) => [r.name, r.present]));
    });
  }

  /** History relations and aggregation policies, read in one transaction. */
  async viewsAndPolicies(
    scope: AccessScope,
  ): Promise<{ views: Record<HistoryRelation, boolean>; policies: PolicyRow }> {
    return readOnlyStep(this.db, scope, async () => ({
      views: await this.historyRelationsPresent(),
      policies: await this.aggregationPolicies(),
    }));
  }

  /** The three history names exist as tables or views (what the pipeline health check promises to look for). */
  private async historyRelationsPresent(): Promise<Record<HistoryRelation, boolean>> {
    const rows = await this.db.rows<{ name: HistoryRelation; present: boolean }>(
      sql`SELECT name, EXISTS (
                SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = current_schema() AND c.relname = name AND c.relkind IN ('r', 'p', 'v', 'm')
              ) AS present
         FROM unnest(${HISTORY_RELATIONS}::text[]) AS name`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.present])) as Record<HistoryRelation, boolean>;
  }

  /**
   * What the aggregation relies on: the (tracker_id, bucket) unique keys the upsert targets, the
   * dedup key that makes ingest retries idempotent, and the cutoff function of the combined view.
   */
  private aggregationPolicies(): Promise<PolicyRow> {
    return this.db.one<PolicyRow>(
      sql`WITH unique_keys AS (
         SELECT c.relname AS rel, array_agg(a.attname::text ORDER BY k.ord) AS cols
           FROM pg_index i
           JOIN pg_class c ON c.oid = i.indrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
           CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
          WHERE i.indisunique AND i.indisvalid AND i.indpred IS NULL
            AND k.ord <= i.indnkeyatts -- key columns only, not INCLUDEd ones
            AND c.relname IN ('location_history_hourly', 'location_history_daily', 'location_reports')
          GROUP BY i.indexrelid, c.relname
       )
       SELECT
         EXISTS (SELECT 1 FROM unique_keys WHERE rel = 'location_history_hourly' AND cols = ARRAY['tracker_id', 'bucket']) AS hourly_bucket_key,
         EXISTS (SELECT 1 FROM unique_keys WHERE rel = 'location_history_daily' AND cols = ARRAY['tracker_id', 'bucket']) AS daily_bucket_key,
         EXISTS (SELECT 1 FROM unique_keys WHERE rel = 'location_reports'
                    AND cols = ARRAY['tracker_id', 'timestamp', 'latitude', 'longitude']) AS report_dedup_key,
         to_regprocedure(format('%I.location_history_cutoff()', current_schema())) IS NOT NULL AS history_cutoff_function`,
    );
  }

  /**
   * The newest `sampleSize` raw reports (primary-key index, backwards) against the hourly and daily
   * rows of their buckets (primary-key probes): an eligible report whose bucket row is missing or
   * holds an older (reported_at, report_id) means the aggregate lags behind the raw data.
   */
  async freshness(scope: AccessScope, sampleSize: number): Promise<FreshnessRow> {
    return readOnlyStep(this.db, scope, async () => {
      const row = await this.db.one<FreshnessRow>(
        sql`WITH recent AS (
           SELECT id, tracker_id, timestamp, eligible, received_at FROM location_reports ORDER BY id DESC LIMIT ${sampleSize}
         ),
         judged AS (
           SELECT r.id, r.tracker_id, r.timestamp,
                  h.tracker_id IS NULL OR (h.reported_at, h.report_id) < (r.timestamp, r.id) AS hourly_stale,
                  d.tracker_id IS NULL OR (d.reported_at, d.report_id) < (r.timestamp, r.id) AS daily_stale,
                  CASE WHEN h.tracker_id IS NULL THEN 'missing' ELSE h.report_id::text END AS hourly,
                  CASE WHEN d.tracker_id IS NULL THEN 'missing' ELSE d.report_id::text END AS daily
             FROM recent r
             -- LATERAL ... LIMIT 1 keeps these primary-key probes: the planner would otherwise flatten them
             -- into a hash join that reads the whole aggregate table.
             LEFT JOIN LATERAL (
               SELECT tracker_id, reported_at, report_id FROM location_history_hourly
                WHERE tracker_id = r.tracker_id AND bucket = date_trunc('hour', r.timestamp, 'UTC') LIMIT 1
             ) h ON TRUE
             LEFT JOIN LATERAL (
               SELECT tracker_id, reported_at, report_id FROM location_history_daily
                WHERE tracker_id = r.tracker_id AND bucket = date_trunc('day', r.timestamp, 'UTC') LIMIT 1
             ) d ON TRUE
            WHERE r.eligible
         )
         SELECT (SELECT count(*) FROM recent)::int AS sampled_reports,
                (SELECT max(received_at) FROM recent) AS newest_received_at,
                count(*)::int AS eligible_reports,
                count(*) FILTER (WHERE hourly_stale)::int AS stale_hourly,
                count(*) FILTER (WHERE daily_stale)::int AS stale_daily,
                (jsonb_agg(jsonb_build_object('report_id', id::text, 'tracker_id', tracker_id, 'timestamp', timestamp,
                                              'hourly', CASE WHEN hourly_stale THEN hourly END,
                                              'daily', CASE WHEN daily_stale THEN daily END)
                           ORDER BY id DESC) FILTER (WHERE hourly_stale OR daily_stale)) AS examples
           FROM judged`,
      );
      return { ...row, examples: row.examples?.slice(0, 5) ?? null };
    });
  }

  /**
   * Trackers most likely to have changed (newest updated, newest status entries, newest created),
   * each compared with its latest (timestamp, id) status entry — one probe per tracker on
   * tracker_status_history (tracker_id, timestamp DESC, id DESC).
   */
  async statusConsistency(scope: AccessScope, sampleSize: number): Promise<StatusConsistencyRow> {
    return readOnlyStep(this.db, scope, async () => {
      const row = await this.db.one<StatusConsistencyRow>(
        sql`WITH sample AS (
           (SELECT id FROM trackers ORDER BY updated_at DESC, id DESC LIMIT ${sampleSize})
           UNION
           (SELECT tracker_id FROM (SELECT tracker_id FROM tracker_status_history ORDER BY id DESC LIMIT ${sampleSize}) newest_entries)
           UNION
           (SELECT id FROM trackers ORDER BY id DESC LIMIT ${sampleSize})
         ),
         compared AS (
           SELECT t.id, t.status, latest.status AS latest_entry_status
             FROM sample s
             JOIN LATERAL (SELECT id, status FROM trackers WHERE id = s.id LIMIT 1) t ON TRUE
             LEFT JOIN LATERAL (
               SELECT h.status FROM tracker_status_history h
                WHERE h.tracker_id = t.id
                ORDER BY h.timestamp DESC, h.id DESC
                LIMIT 1
             ) latest ON TRUE
         )
         SELECT count(*)::int AS sampled_trackers,
                count(*) FILTER (WHERE latest_entry_status IS NULL)::int AS without_history,
                count(*) FILTER (WHERE status <> latest_entry_status)::int AS mismatched,
                (jsonb_agg(jsonb_build_object('tracker_id', id, 'status', status, 'latest_entry_status', latest_entry_status)
                           ORDER BY id) FILTER (WHERE status <> latest_entry_status)) AS examples
           FROM compared`,
      );
      return { ...row, examples: row.examples?.slice(0, 5) ?? null };
    });
  }

  /**
   * Trackers waiting for a geofence replay and how long the oldest has waited (seconds; 0 when
   * none), counted over the GEOFENCE_BACKLOG_SCAN oldest queued marks: a backlog of millions of
   * marks (a large ingest) would otherwise take the step seconds. Marks are read oldest first, so
   * the oldest wait is always exact and the overdue ones are counted before any other; `truncated`
   * says that more marks wait beyond the scan (the counts are then lower bounds).
   */
  async geofenceBacklog(
    scope: AccessScope,
    olderThanSeconds: number,
  ): Promise<{ waiting_trackers: number; overdue_trackers: number; oldest_wait_seconds: number; truncated: boolean }> {
    return readOnlyStep(this.db, scope, () =>
      this.db.one(
        sql`SELECT count(DISTINCT s.tracker_id)::int AS waiting_trackers,
                   count(DISTINCT s.tracker_id) FILTER (WHERE s.marked_at < now() - make_interval(secs => ${olderThanSeconds}))::int AS overdue_trackers,
                   coalesce(round(extract(epoch FROM now() - min(s.marked_at))::numeric, 1), 0)::float8 AS oldest_wait_seconds,
                   count(*) > ${GEOFENCE_BACKLOG_SCAN} AS truncated
              FROM (SELECT u.tracker_id, g.marked_at
                      FROM (SELECT marked_at, coalesce(trackers, ARRAY[tracker_id]) AS ids FROM geofence_pending ORDER BY marked_at) g
                      CROSS JOIN LATERAL unnest(g.ids) AS u(tracker_id)
                     LIMIT ${GEOFENCE_BACKLOG_SCAN + 1}) s`,
      ),
    );
  }
}

/**
 * Runs one step in its own read-only transaction with a statement timeout, so one slow step cannot
 * hang the check. Health reads the whole system: only an admin scope is accepted.
 */
export function readOnlyStep<T>(db: Db, scope: AccessScope, work: () => Promise<T>): Promise<T> {
  if (!scope.all) throw new Error('pipeline health checks read the whole system and need an admin scope');
  return db.replica.transaction(async () => {
    // One round trip (simple protocol allows several statements): this runs on every step.
    await db.execute(raw(`SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${STEP_STATEMENT_TIMEOUT_MS}`));
    return work();
  });
}
