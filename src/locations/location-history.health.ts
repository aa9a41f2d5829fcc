import { Inject } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import {
  PipelineStepProvider,
  readOnlyStep,
  stepOutcome,
  type PipelineStepSource,
  type StepOutcome,
} from '../infrastructure/health/pipeline-step.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** Newest raw reports compared with their bucket rows: fixed, whatever the number of reports. */
export const FRESHNESS_SAMPLE_REPORTS = 500;

const HISTORY_RELATIONS = ['location_history_hourly', 'location_history_daily', 'location_history'] as const;
type HistoryRelation = (typeof HISTORY_RELATIONS)[number];

interface PolicyRow {
  hourly_bucket_key: boolean;
  daily_bucket_key: boolean;
  report_dedup_key: boolean;
  history_cutoff_function: boolean;
}

interface FreshnessRow {
  sampled_reports: number;
  eligible_reports: number;
  stale_hourly: number;
  stale_daily: number;
  newest_received_at: Date | null;
  examples:
    { report_id: string; tracker_id: number; timestamp: string; hourly: string | null; daily: string | null }[] | null;
}

/**
 * check_views_and_policies and check_aggregation_freshness: the history relations, the keys and
 * function the aggregation relies on, and whether the newest raw reports reached their buckets.
 * Every query is bounded (catalog lookups, a LIMIT on an index scan, a primary-key probe per
 * sampled row); see docs/operations.md for the trade-offs.
 */
@PipelineStepProvider()
export class LocationHistoryHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_views_and_policies: (scope: AccessScope) => this.viewsAndPoliciesStep(scope),
    check_aggregation_freshness: (scope: AccessScope) => this.freshnessStep(scope),
  };

  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private async viewsAndPoliciesStep(scope: AccessScope): Promise<StepOutcome> {
    const { views, policies } = await this.viewsAndPolicies(scope);
    const issues = [
      ...Object.entries(views)
        .filter(([, present]) => !present)
        .map(([name]) => `History relation ${name} is missing`),
      ...Object.entries(policies)
        .filter(([, present]) => !present)
        .map(([name]) => `Aggregation policy ${name} is missing`),
    ];
    // Raw retention is an operator's choice (RAW_RETENTION_DAYS): reported, never a failure.
    const retention = this.config.rawRetentionDays > 0;
    return stepOutcome(
      {
        views_status: views,
        policies_status: { ...policies, raw_retention_job: retention },
        raw_retention_days: this.config.rawRetentionDays,
      },
      issues,
    );
  }

  private async freshnessStep(scope: AccessScope): Promise<StepOutcome> {
    const row = await this.freshness(scope, FRESHNESS_SAMPLE_REPORTS);
    const issues: string[] = [];
    if (row.stale_hourly > 0)
      issues.push(
        `${row.stale_hourly} of ${row.eligible_reports} recent eligible reports are newer than their hourly aggregate`,
      );
    if (row.stale_daily > 0)
      issues.push(
        `${row.stale_daily} of ${row.eligible_reports} recent eligible reports are newer than their daily aggregate`,
      );
    return stepOutcome(
      {
        sampled_reports: row.sampled_reports,
        eligible_reports: row.eligible_reports,
        stale_hourly: row.stale_hourly,
        stale_daily: row.stale_daily,
        newest_received_at: row.newest_received_at ? new Date(row.newest_received_at).toISOString() : null,
        examples: row.examples ?? [],
      },
      issues,
    );
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
}
