import { Inject, Injectable } from '@nestjs/common';
import type { AccessScope } from '../../common/auth/access-scope.js';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { CacheService } from '../../infrastructure/cache/cache.service.js';
import { COMPONENT_TIMEOUT_MS } from '../indicators/component-timeout.js';
import { AGGREGATE_TABLES, AggregateChecksRepository, type Granularity } from './aggregate-checks.repository.js';
import { NotificationChecksRepository } from './notification-checks.repository.js';
import { PipelineChecksRepository } from './pipeline-checks.repository.js';

export type StepKey =
  | 'check_database_connection'
  | 'check_required_tables'
  | 'check_views_and_policies'
  | 'check_aggregation_freshness'
  | 'check_aggregation_rules'
  | 'check_cache_store'
  | 'check_status_consistency'
  | 'check_geofence_processing'
  | 'check_notification_delivery';

export interface StepOutcome {
  success: boolean;
  details: Record<string, unknown>;
  issues: string[];
}

export interface StepDefinition {
  key: StepKey;
  name: string;
  /** critical: the API serves wrong data or cannot work; warning: it works, impaired. */
  severity: 'critical' | 'warning';
  /** What the operator should do when the step fails (detail in docs/operations.md#<key>). */
  action: string;
  /** Reads the database: skipped (failed) when the connection step already failed. */
  needsDatabase: boolean;
}

/** The pipeline health steps, in the order they run and are reported. */
export const STEP_DEFINITIONS: readonly StepDefinition[] = [
  {
    key: 'check_database_connection',
    name: 'Database connection',
    severity: 'critical',
    action: 'Check that PostgreSQL is running and reachable with DATABASE_URL, and that the pool is not exhausted.',
    needsDatabase: true,
  },
  {
    key: 'check_required_tables',
    name: 'Required tables',
    severity: 'critical',
    action: 'Run the migrations (npm run migration:run) against the database the service uses.',
    needsDatabase: true,
  },
  {
    key: 'check_views_and_policies',
    name: 'History views and aggregation policies',
    severity: 'critical',
    action:
      'Restore the missing history relations, keys or cutoff function by re-running the migrations on a database restored to a known migration state.',
    needsDatabase: true,
  },
  {
    key: 'check_aggregation_freshness',
    name: 'Aggregation freshness',
    severity: 'critical',
    action:
      'Rebuild the aggregates (npm run cli -- locations:rebuild) and check the ingest logs for failed aggregation.',
    needsDatabase: true,
  },
  {
    key: 'check_aggregation_rules',
    name: 'Aggregation rules',
    severity: 'critical',
    action:
      'Rebuild the aggregates from raw reports (npm run cli -- locations:rebuild) and find the writer that bypassed the rules.',
    needsDatabase: true,
  },
  {
    key: 'check_cache_store',
    name: 'Cache store',
    severity: 'warning',
    action:
      'Check that Redis is running and reachable with REDIS_URL; the service keeps working without the cache, slower.',
    needsDatabase: false,
  },
  {
    key: 'check_status_consistency',
    name: 'Tracker status consistency',
    severity: 'warning',
    action:
      'Reset each listed tracker to its latest status entry and find the writer that changed status without an entry.',
    needsDatabase: true,
  },
  {
    key: 'check_geofence_processing',
    name: 'Geofence processing',
    severity: 'warning',
    action:
      'Check the logs for failed geofence replays and that some instance runs with GEOFENCE_ENABLED on; replay a tracker with npm run cli -- geofences:rebuild --tracker ID.',
    needsDatabase: true,
  },
  {
    key: 'check_notification_delivery',
    name: 'Notification e-mail delivery',
    severity: 'warning',
    action:
      'Check that the SMTP server in SMTP_URL accepts mail from this service, and the logs for failed sends (mail_digests.last_error).',
    needsDatabase: true,
  },
];

/** E-mails still unsent this long after their window ended fail check_notification_delivery. */
export const MAIL_MAX_DELAY_SECONDS = 15 * 60;

/** Reports waiting longer than this for their geofence replay fail check_geofence_processing. */
export const GEOFENCE_MAX_WAIT_SECONDS = 60;

/** Sample sizes: fixed, so each step costs the same on a thousand or on tens of millions of reports. */
export const SAMPLE = {
  /** Newest raw reports compared with their bucket rows. */
  freshnessReports: 500,
  /** Buckets (per granularity) recomputed from raw. */
  recomputedBuckets: 25,
  /** Heap pages at the end of each aggregate table scanned for rule violations (8 kB each). */
  rulesTailPages: 128,
  /** Trackers compared with their latest status entry (per source of the sample). */
  statusTrackers: 500,
} as const;

const ok = (details: Record<string, unknown>, issues: string[] = []): StepOutcome => ({
  success: issues.length === 0,
  details,
  issues,
});

/** The checks themselves: each turns repository numbers into {success, details, issues}. */
@Injectable()
export class PipelineSteps {
  constructor(
    private readonly checks: PipelineChecksRepository,
    private readonly aggregates: AggregateChecksRepository,
    private readonly cache: CacheService,
    private readonly notifications: NotificationChecksRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  run(key: StepKey, scope: AccessScope): Promise<StepOutcome> {
    const steps: Record<StepKey, () => Promise<StepOutcome>> = {
      check_database_connection: () => this.databaseConnection(scope),
      check_required_tables: () => this.requiredTables(scope),
      check_views_and_policies: () => this.viewsAndPolicies(scope),
      check_aggregation_freshness: () => this.aggregationFreshness(scope),
      check_aggregation_rules: () => this.aggregationRules(scope),
      check_cache_store: () => this.cacheStore(),
      check_status_consistency: () => this.statusConsistency(scope),
      check_geofence_processing: () => this.geofenceProcessing(scope),
      check_notification_delivery: () => this.notificationDelivery(scope),
    };
    return steps[key]();
  }

  private async databaseConnection(scope: AccessScope): Promise<StepOutcome> {
    const started = performance.now();
    const { server_version } = await this.checks.ping(scope);
    return ok({ connected: true, server_version, latency_ms: elapsed(started) });
  }

  private async requiredTables(scope: AccessScope): Promise<StepOutcome> {
    const tables = await this.checks.tablesPresent(scope);
    const missing = Object.keys(tables).filter((name) => !tables[name]);
    return ok(
      { tables_status: tables, missing_tables: missing },
      missing.map((name) => `Required table ${name} is missing`),
    );
  }

  private async viewsAndPolicies(scope: AccessScope): Promise<StepOutcome> {
    const { views, policies } = await this.checks.viewsAndPolicies(scope);
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
    return ok(
      {
        views_status: views,
        policies_status: { ...policies, raw_retention_job: retention },
        raw_retention_days: this.config.rawRetentionDays,
      },
      issues,
    );
  }

  private async aggregationFreshness(scope: AccessScope): Promise<StepOutcome> {
    const row = await this.checks.freshness(scope, SAMPLE.freshnessReports);
    const issues: string[] = [];
    if (row.stale_hourly > 0)
      issues.push(
        `${row.stale_hourly} of ${row.eligible_reports} recent eligible reports are newer than their hourly aggregate`,
      );
    if (row.stale_daily > 0)
      issues.push(
        `${row.stale_daily} of ${row.eligible_reports} recent eligible reports are newer than their daily aggregate`,
      );
    return ok(
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

  private async aggregationRules(scope: AccessScope): Promise<StepOutcome> {
    const issues: string[] = [];
    const details: Record<string, unknown> = {};
    const checked = await this.aggregates.aggregationRules(scope, {
      tailPages: SAMPLE.rulesTailPages,
      reports: SAMPLE.freshnessReports,
      buckets: SAMPLE.recomputedBuckets,
    });
    for (const granularity of Object.keys(AGGREGATE_TABLES) as Granularity[]) {
      const { rules, recomputed } = checked[granularity];
      details[granularity] = {
        sampled_rows: rules.sampled_rows,
        sample_covers_whole_table: rules.table_pages <= SAMPLE.rulesTailPages,
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
    return ok(details, issues);
  }

  private async cacheStore(): Promise<StepOutcome> {
    const started = performance.now();
    try {
      await this.cache.ping(COMPONENT_TIMEOUT_MS);
      return ok({ store: this.cache.storeKind, round_trip_ms: elapsed(started) });
    } catch (error) {
      return ok({ store: this.cache.storeKind, round_trip_ms: elapsed(started) }, [
        `Cache store round trip failed: ${(error as Error).message}`,
      ]);
    }
  }

  private async statusConsistency(scope: AccessScope): Promise<StepOutcome> {
    const row = await this.checks.statusConsistency(scope, SAMPLE.statusTrackers);
    return ok(
      {
        sampled_trackers: row.sampled_trackers,
        trackers_without_history: row.without_history,
        mismatched: row.mismatched,
        examples: row.examples ?? [],
      },
      row.mismatched > 0
        ? [
            `${row.mismatched} of ${row.sampled_trackers} sampled trackers have a status different from their latest status entry`,
          ]
        : [],
    );
  }

  /** A waiting mark is an eligible report (or manual entry) automation has not taken into account yet. */
  private async geofenceProcessing(scope: AccessScope): Promise<StepOutcome> {
    const enabled = this.config.geofenceEnabled;
    const row = await this.checks.geofenceBacklog(scope, GEOFENCE_MAX_WAIT_SECONDS);
    return ok(
      { enabled, ...row, max_wait_seconds: GEOFENCE_MAX_WAIT_SECONDS },
      enabled && row.overdue_trackers > 0
        ? [
            `${row.truncated ? 'At least ' : ''}${row.overdue_trackers} trackers have reports waiting more than ${GEOFENCE_MAX_WAIT_SECONDS} s for geofence processing`,
          ]
        : [],
    );
  }

  /** Skipped (passing) without SMTP_URL: nothing is queued then. */
  private async notificationDelivery(scope: AccessScope): Promise<StepOutcome> {
    if (this.config.mail.smtpUrl === undefined)
      return ok({ skipped: true, reason: 'SMTP_URL is not set: e-mail is off' });
    const row = await this.notifications.mailBacklog(scope, MAIL_MAX_DELAY_SECONDS);
    return ok(
      { skipped: false, ...row, max_delay_seconds: MAIL_MAX_DELAY_SECONDS },
      row.overdue > 0
        ? [
            `${row.overdue} e-mails are unsent more than ${MAIL_MAX_DELAY_SECONDS / 60} minutes after their digest window ended`,
          ]
        : [],
    );
  }
}

export function elapsed(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 100) / 100;
}
