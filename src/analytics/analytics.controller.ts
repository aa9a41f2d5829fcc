import { Controller, Get, Logger, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { ANALYTICS_ERRORS } from './analytics.errors.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { AnalyticsService } from './analytics.service.js';
import { AnalyticsCsvQuery, AnalyticsQuery } from './dto/analytics.query.js';
import {
  AggregateMetricsResponse,
  DeliveryLocationPerformanceResponse,
  ProductionRunAnalyticsResponse,
} from './dto/analytics.response.js';

/** A client that accepts no data for this long is treated as gone (a streamed answer pins a DB connection). */
const STREAM_STALL_TIMEOUT_MS = 60_000;

/** Errors shared by the four analytics routes. */
function AnalyticsErrors(): MethodDecorator {
  return ApiErrors(
    PRODUCTION_RUN_ERRORS.productionRunNotFound,
    { ...ERRORS.validationFailed, summary: 'Bad id, `as_of` or other query parameter' },
    ANALYTICS_ERRORS.analyticsFailed,
    { ...ERRORS.unavailable, summary: 'Database unavailable or a statement timeout' },
  );
}

@ApiTags('analytics')
@Controller('production-runs/:id/analytics')
@Access('admin', 'user')
export class AnalyticsController {
  private readonly logger = new Logger(AnalyticsController.name);

  constructor(private readonly analytics: AnalyticsService) {}

  @Get()
  @ApiOperation({
    summary: 'Analytics of a production run: per tracker, aggregates, delivery and storage performance',
    description:
      'Journey, storage and delivery figures of the run, evaluated at `as_of` (default now). A tracker without status entries up to `as_of` counts as ' +
      'CREATED since its created_at (0 days when created after `as_of`). Durations and percentages are rounded to 2 decimals; ' +
      'averages are taken before rounding. Results are cached per run and `as_of` (results for "now" for at most 10 s) and ' +
      'invalidated by any tracker or status write in the run.',
  })
  @ApiOkResponse({ type: ProductionRunAnalyticsResponse })
  @AnalyticsErrors()
  async get(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: AnalyticsQuery,
    @Res() res: Response,
  ): Promise<void> {
    // The body is serialized by the SQL and the service: a large run is tens of megabytes. A cached
    // result is written as bytes with its length; a computed one is streamed as it is read. No
    // ETag: hashing megabytes per request costs more than a conditional request could save.
    const answer = await this.analytics.analyticsJson(scope, id, query.as_of);
    res.status(200);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if ('streamed' in answer) return this.send(res, answer.streamed, `analytics JSON of run ${id}`);
    const [header, computed] = answer.cached;
    res.setHeader('Content-Length', header.length + computed.length);
    res.write(header);
    res.end(computed);
  }

  @Get('summary')
  @ApiOperation({ summary: 'Aggregate metrics of a production run' })
  @ApiOkResponse({ type: AggregateMetricsResponse })
  @AnalyticsErrors()
  summary(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: AnalyticsQuery,
  ): Promise<AggregateMetricsResponse> {
    return this.analytics.summary(scope, id, query.as_of);
  }

  @Get('delivery-performance')
  @ApiOperation({ summary: 'Dwell time per delivery location of the delivered trackers, sorted by name' })
  @ApiOkResponse({ type: [DeliveryLocationPerformanceResponse] })
  @AnalyticsErrors()
  deliveryPerformance(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: AnalyticsQuery,
  ): Promise<DeliveryLocationPerformanceResponse[]> {
    return this.analytics.deliveryPerformance(scope, id, query.as_of);
  }

  @Get('csv')
  @ApiOperation({
    summary: 'Analytics as a streamed CSV download',
    description:
      'Sections Production Run Analytics, Tracker Analytics, Aggregate Summary and Delivery Location Performance (the last two per ' +
      "the include_* flags), separated by one empty line. RFC 4180 quoting; text cells starting with = + - @, tab or CR get a leading `'`.",
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({
    description:
      'CSV file (`Content-Disposition: attachment; filename="production_run_{id}_{description}_{YYYYMMDD_HHMMSS}.csv"`)',
    schema: { type: 'string', format: 'binary' },
  })
  @AnalyticsErrors()
  async csv(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: AnalyticsCsvQuery,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.analytics.csvExport(scope, id, query.as_of, {
      includeAggregateSummary: query.include_aggregate_summary,
      includeDeliveryPerformance: query.include_delivery_performance,
      dateFormat: query.date_format,
    });
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="${file.fileName}"`);
    res.setHeader('Cache-Control', 'no-store');
    return this.send(res, file.stream, `analytics CSV of run ${id}`);
  }

  /**
   * Writes a streamed answer with backpressure. A client that goes away or accepts nothing for
   * STREAM_STALL_TIMEOUT_MS stops it (its socket closes, so does the database cursor). Any other
   * failure midway is rethrown: the exception filter, finding the headers sent, cuts the connection
   * so the client never takes the truncated body for a whole one.
   */
  private async send(res: Response, stream: Readable, what: string): Promise<void> {
    res.setTimeout(STREAM_STALL_TIMEOUT_MS);
    try {
      await pipeline(stream, res);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
      this.logger.warn(`${what}: client went away, stream stopped`);
    }
  }
}
