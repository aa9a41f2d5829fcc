import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, Req, UseInterceptors } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Cached, CacheHeaderInterceptor } from '../infrastructure/cache/cache-header.interceptor.js';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ApiErrors, ApiErrorsWithBody } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PLACE_ERRORS } from '../places/places.errors.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { IMPORT_MAX_ROWS } from './csv/tracker-csv.js';
import { CsvUploadInterceptor } from './csv-upload.interceptor.js';
import { ImportTrackersQuery, ListTrackersQuery, StatusCountsQuery } from './dto/list-trackers.query.js';
import { CreateStatusEntryDto, CreateTrackerDto, UpdateTrackerDto } from './dto/tracker.dto.js';
import {
  ImportFailureResponse,
  ImportResultResponse,
  StatusCountsResponse,
  StatusEntryResponse,
  TrackerDetailResponse,
  TrackerResponse,
} from './dto/tracker.response.js';
import { TrackerImportService } from './tracker-import.service.js';
import { TrackerListsService } from './tracker-lists.service.js';
import { TrackerStatusEntriesService } from './tracker-status-entries.service.js';
import { TrackersService } from './trackers.service.js';

const CACHE_HEADER = {
  'X-Cache': {
    description: 'HIT when served from the cache, else MISS',
    schema: { type: 'string', enum: ['HIT', 'MISS'] },
  },
};

/**
 * Tracker routes. The literal paths (status-counts, import-csv) are declared before
 * `:id` so they are never taken for an id.
 */
@ApiTags('trackers')
@Controller('trackers')
export class TrackersController {
  constructor(
    private readonly trackers: TrackersService,
    private readonly lists: TrackerListsService,
    private readonly statusEntries: TrackerStatusEntriesService,
    private readonly importer: TrackerImportService,
  ) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List trackers (filtered, sorted, paginated; cached per caller scope and query)' })
  @ApiOkResponse({ type: PageOf(TrackerResponse), headers: CACHE_HEADER })
  @ApiErrors({ ...ERRORS.validationFailed, summary: 'Bad filter, sort_by/sort_order or pagination value' })
  @UseInterceptors(CacheHeaderInterceptor)
  list(@CurrentScope() scope: AccessScope, @Query() query: ListTrackersQuery): Promise<Cached<Page<TrackerResponse>>> {
    return this.lists.list(scope, query);
  }

  @Get('status-counts')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Counts of visible trackers per status (cached)' })
  @ApiOkResponse({ type: StatusCountsResponse, headers: CACHE_HEADER })
  @UseInterceptors(CacheHeaderInterceptor)
  statusCounts(
    @CurrentScope() scope: AccessScope,
    @Query() query: StatusCountsQuery,
  ): Promise<Cached<StatusCountsResponse>> {
    return this.lists.statusCounts(scope, query.production_run_id);
  }

  @Post('import-csv')
  @Access('admin', 'user')
  @UseInterceptors(CsvUploadInterceptor)
  @ApiOperation({
    summary: 'Import trackers from CSV',
    description:
      'Multipart field `file`. Headers matched ignoring case, spaces, `_` and `-`: name|tracker_name|tracker, ' +
      'production_run_id|production_run|run_id, status|current_status|state, delivery_location_id|delivery_location, ' +
      'storage_location_id|storage_location, notes|note|comment. Delimiter `,` or `;`, optional UTF-8 BOM. ' +
      'All-or-nothing; at most IMPORT_MAX_BYTES and 100 000 data rows.',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
  })
  @ApiCreatedResponse({ type: ImportResultResponse })
  @ApiExtraModels(ImportFailureResponse)
  // Row errors come with the rows; a file that is not a tracker CSV at all is a plain Error.
  @ApiErrorsWithBody(
    { anyOf: [{ $ref: getSchemaPath(ImportFailureResponse) }, { $ref: '#/components/schemas/Error' }] },
    TRACKER_ERRORS.importRowsInvalid(2),
    TRACKER_ERRORS.csvInvalid('CSV file is empty'),
    TRACKER_ERRORS.csvInvalid('CSV header has no name column (expected one of: name, tracker_name, tracker)'),
  )
  @ApiErrorsWithBody(
    { $ref: getSchemaPath(ImportFailureResponse) },
    TRACKER_ERRORS.importDuplicates(2),
    TRACKER_ERRORS.importDataChanged,
    TRACKER_ERRORS.importNamesTaken,
  )
  @ApiErrors(ERRORS.fileOverLimit('20 MB'), TRACKER_ERRORS.csvTooManyRows(IMPORT_MAX_ROWS))
  importCsv(
    @CurrentScope() scope: AccessScope,
    @Query() query: ImportTrackersQuery,
    @Req() req: Request,
  ): Promise<ImportResultResponse> {
    return this.importer.import(scope, (req.file as Express.Multer.File).buffer, query);
  }

  @Post()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Create a tracker with its first status entry' })
  @ApiCreatedResponse({ type: TrackerResponse })
  @ApiErrors(
    PRODUCTION_RUN_ERRORS.productionRunNotFound,
    PLACE_ERRORS.storageLocationNotFound,
    PLACE_ERRORS.deliveryLocationNotFound,
    TRACKER_ERRORS.trackerExists(),
    TRACKER_ERRORS.deviceIdInUse(),
    {
      ...ERRORS.invalidField('status_timestamp', 'must not be more than 5 minutes in the future'),
      summary:
        'Invalid body, storage_location_id without IN_STORAGE (or missing with it), DELIVERED without delivery_location_id, future status_timestamp',
    },
  )
  create(@CurrentScope() scope: AccessScope, @Body() dto: CreateTrackerDto): Promise<TrackerResponse> {
    return this.trackers.create(scope, dto);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'Tracker with run, locations, status history, latest location and the newest 100 history points',
  })
  @ApiOkResponse({ type: TrackerDetailResponse })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound)
  detail(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<TrackerDetailResponse> {
    return this.trackers.detail(scope, id);
  }

  @Put(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Update a tracker; a changed status appends a status entry at the current time' })
  @ApiOkResponse({ type: TrackerResponse })
  @ApiErrors(
    TRACKER_ERRORS.trackerNotFound,
    PRODUCTION_RUN_ERRORS.productionRunNotFound,
    TRACKER_ERRORS.trackerExists(),
    TRACKER_ERRORS.deviceIdInUse(),
  )
  update(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Body() dto: UpdateTrackerDto,
  ): Promise<TrackerResponse> {
    return this.trackers.update(scope, id, dto);
  }

  @Delete(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Delete a tracker with its status entries, reports and history (admin)' })
  @ApiOkResponse({ type: TrackerResponse })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound)
  remove(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<TrackerResponse> {
    return this.trackers.remove(scope, id);
  }

  @Get(':id/status-history')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Status entries ascending by (timestamp, id)' })
  @ApiOkResponse({ type: [StatusEntryResponse] })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound)
  statusHistory(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<StatusEntryResponse[]> {
    return this.statusEntries.statusHistory(scope, id);
  }

  @Post(':id/status')
  @Access('admin', 'user')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add a status entry',
    description:
      "The tracker's status follows the entry with the latest (timestamp, id); a back-dated entry does not override a newer state.",
  })
  @ApiCreatedResponse({ type: StatusEntryResponse })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound, {
    ...ERRORS.invalidField('timestamp', 'must not be more than 5 minutes in the future'),
    summary:
      'Timestamp > 5 min ahead; IN_STORAGE without storage_location_id; DELIVERED without any delivery location; storage_location_id for any status but IN_STORAGE or delivery_location_id for any but DELIVERED',
  })
  addStatus(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Body() dto: CreateStatusEntryDto,
  ): Promise<StatusEntryResponse> {
    return this.statusEntries.addStatusEntry(scope, id, dto);
  }
}
