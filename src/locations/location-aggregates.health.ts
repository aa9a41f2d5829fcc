import type { AccessScope } from '../common/auth/access-scope.js';
import {
  PipelineStepProvider,
  readOnlyStep,
  stepOutcome,
  type PipelineStepSource,
  type StepOutcome,
} from '../infrastructure/health/pipeline-step.js';
import { Db, raw, sql } from '../infrastructure/database/db.js';
import { FRESHNESS_SAMPLE_REPORTS } from './location-history.health.js';
import { belowMinConfidenceSql, inManufacturingRegionSql } from '../location-reports/location-rules.js';

/** Buckets (per granularity) recomputed from raw. */
const RECOMPUTED_BUCKETS = 25;
/** Heap pages at the end of each aggregate table scanned for rule violations (8 kB each). */
const RULES_TAIL_PAGES = 128;

const AGGREGATE_TABLES = { hourly: 'location_history_hourly', daily: 'location_history_daily' } as const;
type Granularity = keyof typeof AGGREGATE_TABLES;
const BUCKET_UNIT: Record<Granularity, 'hour' | 'day'> = { hourly: 'hour', daily: 'day' };

interface RulesRow {
  sampled_rows: number;
  below_min_confidence: number;
  inside_excluded_region: number;
  examples: { tracker_id: number; bucket: string; confidence: number; latitude: number; longitude: number }[] | null;
}

interface RecomputeRow {
  sampled_buckets: number;
  mismatched: number;
  examples:
    { tracker_id: number; bucket: string; stored_report_id: string | null; expected_report_id: string | null }[] | null;
}

/**
 * check_aggregation_rules over the hourly and daily aggregates: bounded samples (a TID range over
 * the last heap pages, primary-key probes per sampled bucket) checked against the aggregation rule
 * and recomputed from the raw reports.
 */
@PipelineStepProvider()
export class LocationAggregatesHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_aggregation_rules: (scope: AccessScope) => this.rulesStep(scope),
  };

  constructor(private readonly db: Db) {}

  private async rulesStep(scope: AccessScope): Promise<StepOutcome> {
    const issues: string[] = [];
    const details: Record<string, unknown> = {};
    const checked = await this.aggregationRules(scope, {
      tailPages: RULES_TAIL_PAGES,
      reports: FRESHNESS_SAMPLE_REPORTS,
      buckets: RECOMPUTED_BUCKETS,
    });
    for (const granularity of Object.keys(AGGREGATE_TABLES) as Granularity[]) {
      const { rules, recomputed } = checked[granularity];
      details[granularity] = {
        sampled_rows: rules.sampled_rows,
        sample_covers_whole_table: rules.table_pages <= RULES_TAIL_PAGES,
        below_min_confidence: rules.below_min_confidence,
        inside_excluded_region: rules.inside_excluded_region,
        violations: rules.examples ?? [],
        recomputed_buckets: recomputed.sampled_buckets,
        recompute_mismatches: recomputed.mismatched,
        mismatches: recomputed.examples ?? [],
      };
      if (rules.below_min_confidence > 0)
        issues.push(`${rules.below_min_confidence} ${granularity} aggregate rows have confidence below 2`);
      if (rules.inside_excluded_region > 0) {
        issues.push(
          `${rules.inside_excluded_region} ${granularity} aggregate rows lie inside the manufacturing-region box`,
        );
      }
      if (recomputed.mismatched > 0) {
        issues.push(
          `${recomputed.mismatched} of ${recomputed.sampled_buckets} sampled ${granularity} buckets differ from a recomputation from raw reports`,
        );
      }
    }
    return stepOutcome(details, issues);
  }

  /** Rule violations and the recomputation sample of both aggregate tables, in one transaction. */
  private async aggregationRules(
    scope: AccessScope,
    sample: { tailPages: number; reports: number; buckets: number },
  ): Promise<Record<Granularity, { rules: RulesRow & { table_pages: number }; recomputed: RecomputeRow }>> {
    return readOnlyStep(this.db, scope, async () => {
      const result = {} as Record<Granularity, { rules: RulesRow & { table_pages: number }; recomputed: RecomputeRow }>;
      for (const granularity of Object.keys(AGGREGATE_TABLES) as Granularity[]) {
        result[granularity] = {
          rules: await this.ruleViolations(granularity, sample.tailPages),
          recomputed: await this.recomputeSample(granularity, sample.reports, sample.buckets),
        };
      }
      return result;
    });
  }

  /**
   * Rule violations (the aggregation rule of location-rules.ts, inverted) among the rows in the
   * last `tailPages` heap pages of an aggregate table: a TID range scan, so the cost is fixed
   * whatever the table size.
   * New and upserted rows land at the end of the heap, so this covers what the ingest path wrote
   * most recently; a small table is covered completely.
   */
  private async ruleViolations(
    granularity: Granularity,
    tailPages: number,
  ): Promise<RulesRow & { table_pages: number }> {
    const table = AGGREGATE_TABLES[granularity];
    const belowMin = belowMinConfidenceSql('confidence');
    const insideBox = inManufacturingRegionSql('latitude', 'longitude');
    // The start page must be a bound value: computed inside the statement it is not a constant
    // and the planner falls back to a sequential scan of the whole table.
    const { pages } = await this.db.one<{ pages: number }>(
      sql`SELECT (pg_relation_size(${table}::regclass) / current_setting('block_size')::bigint)::int AS pages`,
    );
    const fromTid = `(${Math.max(0, pages - tailPages)},0)`;
    const row = await this.db.one<RulesRow>(
      sql`SELECT count(*)::int AS sampled_rows,
              count(*) FILTER (WHERE ${belowMin})::int AS below_min_confidence,
              count(*) FILTER (WHERE ${insideBox})::int AS inside_excluded_region,
              (jsonb_agg(jsonb_build_object('tracker_id', tracker_id, 'bucket', bucket, 'confidence', confidence,
                                            'latitude', latitude, 'longitude', longitude))
                 FILTER (WHERE ${belowMin} OR ${insideBox})) AS examples
         FROM ${raw(table)}
        WHERE ctid >= ${fromTid}::tid`,
    );
    return { ...row, table_pages: pages, examples: row.examples?.slice(0, 5) ?? null };
  }

  /**
   * Recomputes up to `bucketLimit` buckets (those of the newest `sampleSize` eligible reports) from
   * raw data — the eligible report with the greatest (timestamp, id) in the bucket, read through
   * the (tracker_id, timestamp, ...) index — and compares it with the stored row.
   */
  private async recomputeSample(
    granularity: Granularity,
    sampleSize: number,
    bucketLimit: number,
  ): Promise<RecomputeRow> {
    const table = raw(AGGREGATE_TABLES[granularity]);
    const unit = BUCKET_UNIT[granularity];
    const row = await this.db.one<RecomputeRow>(
      sql`WITH recent AS (
         SELECT tracker_id, timestamp, eligible FROM location_reports ORDER BY id DESC LIMIT ${sampleSize}
       ),
       buckets AS (
         SELECT DISTINCT tracker_id, date_trunc(${raw(`'${unit}'`)}, timestamp, 'UTC') AS bucket FROM recent WHERE eligible LIMIT ${bucketLimit}
       ),
       compared AS (
         SELECT b.tracker_id, b.bucket, a.report_id AS stored_report_id, w.id AS expected_report_id,
                (a.report_id IS NOT DISTINCT FROM w.id AND a.reported_at IS NOT DISTINCT FROM w.timestamp
                 AND a.latitude IS NOT DISTINCT FROM w.latitude AND a.longitude IS NOT DISTINCT FROM w.longitude
                 AND a.confidence IS NOT DISTINCT FROM w.confidence) AS matches
           FROM buckets b
           LEFT JOIN LATERAL (
             SELECT report_id, reported_at, latitude, longitude, confidence FROM ${table}
              WHERE tracker_id = b.tracker_id AND bucket = b.bucket LIMIT 1
           ) a ON TRUE
           LEFT JOIN LATERAL (
             SELECT r.id, r.timestamp, r.latitude, r.longitude, r.confidence
               FROM location_reports r
              WHERE r.tracker_id = b.tracker_id AND r.timestamp >= b.bucket AND r.timestamp < b.bucket + ${raw(`interval '1 ${unit}'`)}
                AND r.eligible
              ORDER BY r.timestamp DESC, r.id DESC
              LIMIT 1
           ) w ON TRUE
       )
       SELECT count(*)::int AS sampled_buckets,
              count(*) FILTER (WHERE NOT matches)::int AS mismatched,
              (jsonb_agg(jsonb_build_object('tracker_id', tracker_id, 'bucket', bucket,
                                            'stored_report_id', stored_report_id::text, 'expected_report_id', expected_report_id::text))
                 FILTER (WHERE NOT matches)) AS examples
         FROM compared`,
    );
    return { ...row, examples: row.examples?.slice(0, 5) ?? null };
  }
}
