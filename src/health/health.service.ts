import { Inject, Injectable, Logger, Optional, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, type HealthCheckResult, type HealthIndicatorResult } from '@nestjs/terminus';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { isoWithOffset } from '../common/http/timestamps.js';
import { DatabasePool } from '../infrastructure/database/database-pool.js';
import { ReadReplicas } from '../infrastructure/database/read-replicas.js';
import type {
  BasicHealthResponse,
  ComponentHealthResponse,
  PipelineHealthResponse,
  PoolHealthResponse,
  ReadReplicasHealthResponse,
  SimpleStatusResponse,
  SystemHealthResponse,
} from './dto/health.response.js';
import { poolStatusFor, systemStatusFor } from './health-status.js';
import { CacheStoreHealthIndicator } from './indicators/cache-store.health.js';
import { DatabaseHealthIndicator } from './indicators/database.health.js';
import { pipelineErrorResult, PipelineHealthService } from './pipeline/pipeline.service.js';
import { elapsed } from './pipeline/pipeline-steps.js';

const COMPONENTS = ['database', 'cache_store'] as const;

/**
 * Health results (docs/api.md, health). Checks that ran always produce a result (with
 * `unhealthy` inside); anything that prevents a check from running is a failure of the health
 * machinery → 500 `Health check failed: <cause>`.
 */
@Injectable()
export class HealthService {
  private readonly logger = new Logger(HealthService.name);
  private lastUnhealthyLogAt = 0;

  constructor(
    private readonly terminus: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly cacheStore: CacheStoreHealthIndicator,
    private readonly pipelineHealth: PipelineHealthService,
    private readonly pool: DatabasePool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly replicas?: ReadReplicas,
  ) {}

  basic(): Promise<BasicHealthResponse> {
    return machinery(() => this.runBasic());
  }

  async status(): Promise<SimpleStatusResponse> {
    const basic = await this.basic();
    return { status: basic.status, timestamp: basic.timestamp };
  }

  pipeline(scope: AccessScope): Promise<PipelineHealthResponse> {
    return machinery(() => this.pipelineHealth.check(scope));
  }

  /**
   * Basic and pipeline together (they run concurrently; each bounds its own time). A pipeline
   * machinery failure is reported inside as `error` (→ system `unhealthy`) because the basic part
   * still tells the caller something true; a basic machinery failure is a 500.
   */
  system(scope: AccessScope): Promise<SystemHealthResponse> {
    return machinery(async () => {
      const started = performance.now();
      const pipelineRun = this.timedPipeline(scope);
      const basic = await this.runBasic();
      const pipeline = await pipelineRun;
      const healthyComponents = COMPONENTS.filter((c) => basic.components[c].status === 'healthy').length;
      return {
        status: systemStatusFor(basic.status, pipeline.status),
        timestamp: isoWithOffset(),
        basic,
        pipeline,
        overall_metrics: {
          success_rate: pipeline.success_rate,
          components_healthy: healthyComponents + pipeline.successful_steps,
          components_total: COMPONENTS.length + pipeline.total_steps,
          basic_response_time_ms: basic.response_time_ms,
          pipeline_response_time_ms: pipeline.response_time_ms,
          response_time_ms: elapsed(started),
        },
      };
    });
  }

  /** Pool numbers (size, checked out/in, waiting, total) over the pg pool behind TypeORM. */
  dbPool(): PoolHealthResponse {
    const stats = this.pool.stats();
    const checkedOut = Math.min(stats.checkedOut, stats.size);
    const checkedIn = stats.size - checkedOut;
    const utilization = stats.size > 0 ? Math.round((checkedOut / stats.size) * 10_000) / 100 : 0;
    return {
      status: poolStatusFor(checkedIn, utilization),
      pool_stats: {
        size: stats.size,
        checked_in: checkedIn,
        checked_out: checkedOut,
        overflow: stats.waiting,
        total: stats.total,
        utilization_percent: utilization,
      },
      configuration: { using_pgbouncer: this.config.usingPgbouncer, environment: this.config.nodeEnv },
    };
  }

  private async runBasic(): Promise<BasicHealthResponse> {
    const started = performance.now();
    const result = await this.terminusResult();
    const components = {
      database: toComponent(result.details.database),
      cache_store: toComponent(result.details.cache_store),
    };
    const healthy = COMPONENTS.every((key) => components[key].status === 'healthy');
    if (!healthy) this.warnThrottled(components);
    return {
      status: healthy ? 'healthy' : 'unhealthy',
      timestamp: isoWithOffset(),
      components,
      response_time_ms: elapsed(started),
      ...(this.replicas?.configured ? { read_replicas: this.readReplicas(this.replicas) } : {}),
    };
  }

  /** The replicas' last measurements (no query: they are measured in the background). */
  private readReplicas(replicas: ReadReplicas): ReadReplicasHealthResponse {
    return {
      fallback: replicas.fallback,
      max_lag_ms: replicas.maxLagMs,
      replicas: replicas.states().map((r) => ({
        name: r.name,
        address: r.address,
        status: r.status,
        lag_ms: r.lagMs,
        checked_at: r.checkedAt ? isoWithOffset(r.checkedAt) : null,
        error: r.error,
      })),
    };
  }

  /** Basic is polled often (load balancers): one warning per 10 s while a component stays down. */
  private warnThrottled(components: BasicHealthResponse['components']): void {
    if (Date.now() - this.lastUnhealthyLogAt < 10_000) return;
    this.lastUnhealthyLogAt = Date.now();
    this.logger.warn({ components }, 'basic health check found unhealthy components');
  }

  /** Terminus throws 503 carrying the full result when an indicator is down; we report, not fail. */
  private async terminusResult(): Promise<HealthCheckResult> {
    try {
      return await this.terminus.check([() => this.database.check(), () => this.cacheStore.check()]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) return error.getResponse() as HealthCheckResult;
      throw error;
    }
  }

  private async timedPipeline(scope: AccessScope): Promise<PipelineHealthResponse> {
    const started = performance.now();
    try {
      return await this.pipelineHealth.check(scope);
    } catch (error) {
      const cause = causeOf(error);
      this.logger.error({ err: error }, `pipeline health check failed: ${cause}`);
      return pipelineErrorResult(cause, elapsed(started));
    }
  }
}

function toComponent(result: HealthIndicatorResult[string] | undefined): ComponentHealthResponse {
  if (!result) return { status: 'unhealthy', error: 'component was not checked' };
  if (result.status === 'up') return { status: 'healthy', error: null };
  const message =
    typeof result.message === 'string' && result.message !== '' ? result.message : 'component check failed';
  return { status: 'unhealthy', error: message };
}

function causeOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0].slice(0, 300) || 'unknown error';
}

/** Runs a health check; a failure of the check itself becomes 500 `Health check failed: <cause>`. */
async function machinery<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    new Logger(HealthService.name).error({ err: error }, 'health check machinery failed');
    throw new DomainError(ERRORS.healthCheckFailed(causeOf(error)));
  }
}
