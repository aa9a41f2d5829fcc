import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import { AccessScope } from '../common/auth/access-scope.js';
import { KeyScope } from '../common/auth/api-key.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentScope, CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { BodyLimit } from '../common/http/request-body.js';
import { IngestResultResponse } from './dto/ingest-result.response.js';
import { LocationHistoryQuery } from './dto/location-history.query.js';
import { LocationPointResponse } from './dto/location-point.response.js';
import {
  LocationReportBatchDto,
  TrackerLocationReportBatchDto,
  TrackerLocationReportDto,
} from './dto/location-report.dto.js';
import { LocationHistoryService } from './location-history.service.js';
import { LocationIngestionService, type IngestResult } from './location-ingestion.service.js';
import type { LocationPoint } from '../location-reports/location-point.js';
import { MAX_BATCH_BODY_BYTES, reportItems } from './report-batch.js';

const MALFORMED_BODY = {
  ...ERRORS.validationFailed,
  summary: 'Malformed body (not an object, `reports` missing or not an array, empty, more than 10 000 reports)',
};

/**
 * Ingest devices post for every tracker, so their scope is the whole fleet (narrowed to an API
 * key's clients when it names some); the repository still applies it in SQL like any other scope.
 */
function ingestScope(user: AuthUser): AccessScope {
  return AccessScope.ingest(user);
}

@ApiTags('locations')
@Controller()
export class LocationsController {
  constructor(
    private readonly ingestion: LocationIngestionService,
    private readonly history: LocationHistoryService,
  ) {}

  @Post('locations/reports')
  @BodyLimit(MAX_BATCH_BODY_BYTES)
  @HttpCode(200)
  @Access('admin', 'ingest')
  @KeyScope('ingest')
  @ApiOperation({
    summary: 'Ingest a batch of location reports',
    description:
      'Each report is judged on its own: invalid ones (bad value, unknown tracker, timestamp more than 5 minutes ahead) are listed in `rejected` and the rest are stored. ' +
      'Re-sending a report with the same (tracker_id, timestamp, latitude, longitude) is a duplicate and changes nothing. ' +
      'Eligible reports (confidence >= 2, outside the manufacturing-region box) update the hourly and daily history in the same transaction.',
  })
  @ApiBody({ type: LocationReportBatchDto })
  @ApiOkResponse({ type: IngestResultResponse })
  @ApiErrors(MALFORMED_BODY)
  ingestBatch(@CurrentUser() user: AuthUser, @Body() body: unknown): Promise<IngestResult> {
    return this.ingestion.ingest(ingestScope(user), reportItems(body, false));
  }

  @Post('trackers/:id/locations')
  @BodyLimit(MAX_BATCH_BODY_BYTES)
  @HttpCode(200)
  @Access('admin', 'ingest')
  @KeyScope('ingest')
  @ApiOperation({
    summary: "Ingest one tracker's location reports",
    description:
      'One report object, or `{"reports": [...]}`; the items carry no `tracker_id` (the path names the tracker). Same rules and response as POST /locations/reports.',
  })
  @ApiExtraModels(TrackerLocationReportDto, TrackerLocationReportBatchDto)
  @ApiBody({
    schema: {
      oneOf: [
        { $ref: getSchemaPath(TrackerLocationReportDto) },
        { $ref: getSchemaPath(TrackerLocationReportBatchDto) },
      ],
    },
  })
  @ApiOkResponse({ type: IngestResultResponse })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound, MALFORMED_BODY, ERRORS.invalidField('id', 'must be a positive integer'))
  async ingestForTracker(
    @CurrentUser() user: AuthUser,
    @IdParam() id: number,
    @Body() body: unknown,
  ): Promise<IngestResult> {
    const scope = ingestScope(user);
    const items = reportItems(body, true);
    return this.ingestion.ingestForTracker(scope, items, id);
  }

  @Get('trackers/:id/location-history')
  @Access('admin', 'user')
  @ApiOperation({
    summary: "A tracker's aggregated location history",
    description:
      'One point per UTC hour or day bucket: the eligible report with the latest (timestamp, id) in it. `timestamp` is the bucket start, `reported_at` the report time.',
  })
  @ApiOkResponse({ type: PageOf(LocationPointResponse) })
  @ApiErrors(
    TRACKER_ERRORS.trackerNotFound,
    ERRORS.validationFailed,
    ERRORS.invalidField('start_date', 'must not be after end_date'),
  )
  historyPage(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: LocationHistoryQuery,
  ): Promise<Page<LocationPoint>> {
    return this.history.page(scope, id, query);
  }
}
