import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { AccessScope } from '../../common/auth/access-scope.js';
import {
  PipelineStepProvider,
  stepOutcome,
  type PipelineStepCheck,
  type PipelineStepSource,
  type StepOutcome,
} from '../../infrastructure/health/pipeline-step.js';
import { CacheService } from '../../infrastructure/cache/cache.service.js';
import { COMPONENT_TIMEOUT_MS } from '../indicators/component-timeout.js';
import { PipelineChecksRepository } from './pipeline-checks.repository.js';

export type { StepOutcome } from '../../infrastructure/health/pipeline-step.js';

export type StepKey =
  | 'check_database_connection'
  | 'check_required_tables'
  | 'check_views_and_policies'
  | 'check_aggregation_freshness'
  | 'check_aggregation_rules'
  | 'check_cache_store'
  | 'check_status_consistency'
  | 'check_geofence_processing'
  | 'check_notification_delivery'
  | 'check_webhook_delivery'
  | 'check_mqtt_ingest';

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

/**
 * The pipeline health steps, in the order they run and are reported. The database connection,
 * the required tables and the cache store are checked here; every other step is answered by the
 * feature owning its tables (a @PipelineStepProvider() of that feature's module).
 */
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
  {
    key: 'check_webhook_delivery',
    name: 'Webhook delivery',
    severity: 'warning',
    action:
      'Check that some instance is running and the logs for webhook delivery warnings; a backlog with no failures means the workers are too few or too slow (WEBHOOK_CONCURRENCY).',
    needsDatabase: true,
  },
  {
    key: 'check_mqtt_ingest',
    name: 'MQTT ingest',
    severity: 'warning',
    action:
      'Check that the broker in MQTT_URL is running and reachable, that its ACLs let this client id subscribe to the shared subscription, and the logs for MQTT ingest warnings; devices keep their reports at the broker meanwhile.',
    needsDatabase: false,
  },
];

/**
 * The checks themselves: the cross-cutting ones here, the others looked up among the providers
 * the features mark with @PipelineStepProvider(). A step no provider answers fails when it runs
 * (e.g. a test application without the owning module).
 */
@Injectable()
export class PipelineSteps implements OnModuleInit {
  private readonly featureSteps = new Map<string, PipelineStepCheck>();

  constructor(
    private readonly checks: PipelineChecksRepository,
    private readonly cache: CacheService,
    private readonly discovery: DiscoveryService,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: PipelineStepProvider.KEY })) {
      const source = wrapper.instance as PipelineStepSource | undefined;
      for (const [key, check] of Object.entries(source?.pipelineSteps ?? {})) this.featureSteps.set(key, check);
    }
  }

  run(key: StepKey, scope: AccessScope): Promise<StepOutcome> {
    if (key === 'check_database_connection') return this.databaseConnection(scope);
    if (key === 'check_required_tables') return this.requiredTables(scope);
    if (key === 'check_cache_store') return this.cacheStore();
    const check = this.featureSteps.get(key);
    if (!check) return Promise.reject(new Error(`no module answers ${key}`));
    return check(scope);
  }

  private async databaseConnection(scope: AccessScope): Promise<StepOutcome> {
    const started = performance.now();
    const { server_version } = await this.checks.ping(scope);
    return stepOutcome({ connected: true, server_version, latency_ms: elapsed(started) });
  }

  private async requiredTables(scope: AccessScope): Promise<StepOutcome> {
    const tables = await this.checks.tablesPresent(scope);
    const missing = Object.keys(tables).filter((name) => !tables[name]);
    return stepOutcome(
      { tables_status: tables, missing_tables: missing },
      missing.map((name) => `Required table ${name} is missing`),
    );
  }

  private async cacheStore(): Promise<StepOutcome> {
    const started = performance.now();
    try {
      await this.cache.ping(COMPONENT_TIMEOUT_MS);
      return stepOutcome({ store: this.cache.storeKind, round_trip_ms: elapsed(started) });
    } catch (error) {
      return stepOutcome({ store: this.cache.storeKind, round_trip_ms: elapsed(started) }, [
        `Cache store round trip failed: ${(error as Error).message}`,
      ]);
    }
  }
}

export function elapsed(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 100) / 100;
}
