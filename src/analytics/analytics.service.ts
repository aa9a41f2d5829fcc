import { HttpException, Inject, Injectable, Logger } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { ANALYTICS_ERRORS } from './analytics.errors.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { isDatabaseUnavailable, isStatementTimeout } from '../infrastructure/database/sql-state.js';
import { isoUtc } from '../common/http/timestamps.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { NOW_RESULT_TTL_SECONDS } from './analytics-cache.js';
import { CACHE_AREAS } from '../infrastructure/cache/cache-invalidation.js';
import type { Readable } from 'node:stream';
import { analyticsCsvFile, type AnalyticsCsvFile, type AnalyticsCsvOptions } from './analytics-csv.writer.js';
import { analyticsJsonStream } from './analytics-json.writer.js';
import { toAggregateSections, type AggregateSections } from './analytics.mapper.js';
import { AnalyticsRepository, type AnalyticsRunRow } from './analytics.repository.js';
import type {
  AggregateMetricsResponse,
  DeliveryLocationPerformanceResponse,
  ProductionRunAnalyticsResponse,
} from './dto/analytics.response.js';

/** A streamed export may run this long on its connection (a slow client reads a big run). */
const EXPORT_STATEMENT_TIMEOUT_MS = 15 * 60_000;

/**
 * The JSON result: from the cache as bytes (the run header, fresh, and the cached computed part),
 * or computed and streamed from the database.
 */
type AnalyticsJson = { cached: [header: Buffer, computed: Buffer] } | { streamed: Readable };

/** What a cache entry holds (part of its key): the serialized full result or the aggregate sections. */
type ResultKind = 'full-bytes' | 'aggregates';

/**
 * Errors of an analytics calculation as the API answers them: 404/422 and other HTTP errors
 * stay, an unreachable database or a statement timeout stays 503, anything else is
 * `500 Analytics calculation failed` (the cause is logged, never sent).
 */
export function toAnalyticsError(error: unknown, logger?: Logger): unknown {
  if (error instanceof HttpException || error instanceof DomainError) return error;
  if (isDatabaseUnavailable(error)) return error;
  if (isStatementTimeout(error)) return new DomainError(ERRORS.unavailable);
  logger?.error({ err: error }, 'analytics calculation failed');
  return new DomainError(ANALYTICS_ERRORS.analyticsFailed);
}

/**
 * Production-run analytics: visibility, caching and the response shapes. The run is
 * looked up on every request (fresh visibility, description and dates); only the computed part is
 * cached, per run, scope, as_of and kind, under the run's invalidation area.
 */
@Injectable()
export class AnalyticsService {
  private readonly logger = new Logger(AnalyticsService.name);

  constructor(
    private readonly repository: AnalyticsRepository,
    private readonly cache: CacheService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The full analytics as JSON text: the run header (fresh per request: visibility, description,
   * dates) and the computed rest, from `"total_trackers"` on, in the field order of
   * ProductionRunAnalyticsResponse. A 100 000-tracker run is ~50 MB: a miss streams it from the
   * database cursor (memory stays flat) and keeps the computed part for the cache only when it is
   * at most `analyticsCacheMaxBytes` long; a hit writes the cached text as it is.
   */
  async analyticsJson(scope: AccessScope, runId: number, asOf?: Date): Promise<AnalyticsJson> {
    return this.calculating(async () => {
      const key = await this.cacheKey(scope, runId, asOf, 'full-bytes');
      const hit = await this.cache.getText(key);
      if (hit !== undefined)
        return { cached: [Buffer.from(runHeaderJson(await this.requireRun(scope, runId))), Buffer.from(hit)] };
      // The usual statement timeout (503 when exceeded): each cursor fetch is timed on its own, so it
      // bounds the statement's work, not the time a client takes to read.
      const source = await this.repository.openJson(scope, runId, asOf ?? new Date(), this.config.dbStatementTimeoutMs);
      if (!source) throw new DomainError(PRODUCTION_RUN_ERRORS.productionRunNotFound);
      const streamed = await analyticsJsonStream(source, {
        header: runHeaderJson(source.run),
        keepMaxLength: this.config.analyticsCacheMaxBytes,
        // Stored after the last rows are on their way: setText() never throws.
        keep: (computed) => setImmediate(() => void this.cache.setText(key, computed, this.ttl(asOf))),
      });
      return { streamed };
    });
  }

  async summary(scope: AccessScope, runId: number, asOf?: Date): Promise<AggregateMetricsResponse> {
    return (await this.aggregateSections(scope, runId, asOf)).aggregate_metrics;
  }

  async deliveryPerformance(
    scope: AccessScope,
    runId: number,
    asOf?: Date,
  ): Promise<DeliveryLocationPerformanceResponse[]> {
    return (await this.aggregateSections(scope, runId, asOf)).delivery_location_performance;
  }

  /**
   * The CSV export, read from a database cursor in one consistent snapshot as the caller consumes
   * the stream. Never cached. Errors before the stream is returned answer normally (404, 500, 503).
   */
  async csvExport(
    scope: AccessScope,
    runId: number,
    asOf: Date | undefined,
    options: Omit<AnalyticsCsvOptions, 'generatedAt'>,
  ): Promise<AnalyticsCsvFile> {
    const generatedAt = new Date();
    const source = await this.calculating(async () => {
      const opened = await this.repository.openExport(scope, runId, asOf ?? generatedAt, EXPORT_STATEMENT_TIMEOUT_MS);
      if (!opened) throw new DomainError(PRODUCTION_RUN_ERRORS.productionRunNotFound);
      return opened;
    });
    return analyticsCsvFile(source, { ...options, generatedAt });
  }

  private async aggregateSections(scope: AccessScope, runId: number, asOf?: Date): Promise<AggregateSections> {
    return this.calculating(async () => {
      await this.requireRun(scope, runId);
      return this.cached(scope, runId, asOf, 'aggregates', async (at) =>
        toAggregateSections(await this.repository.aggregates(scope, runId, at)),
      );
    });
  }

  private async requireRun(scope: AccessScope, runId: number): Promise<AnalyticsRunRow> {
    const run = await this.repository.findRun(scope, runId);
    if (!run) throw new DomainError(PRODUCTION_RUN_ERRORS.productionRunNotFound);
    return run;
  }

  /** Cache-aside under the run's area; results for "now" only briefly (see analytics-cache.ts). */
  private async cached<T>(
    scope: AccessScope,
    runId: number,
    asOf: Date | undefined,
    kind: ResultKind,
    compute: (at: Date) => Promise<T>,
  ): Promise<T> {
    const key = await this.cacheKey(scope, runId, asOf, kind);
    const hit = await this.cache.get<T>(key);
    if (hit !== undefined) return hit;
    const value = await compute(asOf ?? new Date());
    // Stored after the response is on its way: set() never throws, so nobody needs to wait for it.
    setImmediate(() => void this.cache.set(key, value, this.ttl(asOf)));
    return value;
  }

  private cacheKey(scope: AccessScope, runId: number, asOf: Date | undefined, kind: ResultKind): Promise<string> {
    return this.cache.key('analytics', [CACHE_AREAS.runAnalytics(runId)], {
      scope: scope.cacheKey,
      runId,
      asOf: asOf?.toISOString() ?? null,
      kind,
    });
  }

  private ttl(asOf: Date | undefined): number {
    return asOf ? this.config.cacheTtlSeconds : Math.min(NOW_RESULT_TTL_SECONDS, this.config.cacheTtlSeconds);
  }

  private async calculating<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toAnalyticsError(error, this.logger);
    }
  }
}

/** The run's fields of the JSON result, as the text before the computed part: `{"production_run_id":…,`. */
function runHeaderJson(run: AnalyticsRunRow): string {
  const header: Partial<ProductionRunAnalyticsResponse> = {
    production_run_id: run.id,
    production_run_description: run.description,
    production_run_start_date: isoUtc(run.start_date),
    production_run_end_date: isoUtc(run.end_date),
  };
  return `${JSON.stringify(header).slice(0, -1)},`;
}
