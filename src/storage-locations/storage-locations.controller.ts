import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AccessScope } from '../common/auth/access-scope.js';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import {
  CreateStorageLocationDto,
  ListStorageLocationsQuery,
  StorageLocationResponse,
  UpdateStorageLocationDto,
} from './dto/storage-location.dto.js';
import { StorageLocationsService } from './storage-locations.service.js';

const NOT_FOUND = '`{"detail":"Storage location not found"}`';
const INVALID = 'Invalid id, query or body: `{"detail":"Validation failed: ...","errors":[...]}`';

/**
 * Storage locations: shared reference data (every admin and user reads all of them).
 * `GET /storage-locations/{id}/trackers` lives in the trackers module.
 */
@ApiTags('storage-locations')
@Controller('storage-locations')
export class StorageLocationsController {
  constructor(private readonly locations: StorageLocationsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List storage locations' })
  @ApiOkResponse({ type: PageOf(StorageLocationResponse) })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListStorageLocationsQuery): Promise<Page<StorageLocationResponse>> {
    return this.locations.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a storage location' })
  @ApiOkResponse({ type: StorageLocationResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<StorageLocationResponse> {
    return this.locations.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a storage location (admin)' })
  @ApiCreatedResponse({ type: StorageLocationResponse })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  create(@CurrentScope() scope: AccessScope, @Body() body: CreateStorageLocationDto): Promise<StorageLocationResponse> {
    return this.locations.create(scope, body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a storage location (admin; partial body allowed; null clears address/latitude/longitude)' })
  @ApiOkResponse({ type: StorageLocationResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  update(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Body() body: UpdateStorageLocationDto,
  ): Promise<StorageLocationResponse> {
    return this.locations.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a storage location (admin); answers the deleted location' })
  @ApiOkResponse({ type: StorageLocationResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({
    description:
      'Still used: `{"detail":"Storage location is still referenced by trackers"}` or `{"detail":"Storage location is still referenced by tracker status history"}`',
  })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<StorageLocationResponse> {
    return this.locations.delete(scope, id);
  }
}
