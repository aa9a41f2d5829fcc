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
  CreateDeliveryLocationDto,
  ListDeliveryLocationsQuery,
  DeliveryLocationResponse,
  UpdateDeliveryLocationDto,
} from './dto/delivery-location.dto.js';
import { DeliveryLocationsService } from './delivery-locations.service.js';

const NOT_FOUND = '`{"detail":"Delivery location not found"}`';
const INVALID = 'Invalid id, query or body: `{"detail":"Validation failed: ...","errors":[...]}`';

/**
 * Delivery locations: shared reference data (every admin and user reads all of them).
 * `GET /delivery-locations/{id}/trackers` lives in the trackers module.
 */
@ApiTags('delivery-locations')
@Controller('delivery-locations')
export class DeliveryLocationsController {
  constructor(private readonly locations: DeliveryLocationsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List delivery locations' })
  @ApiOkResponse({ type: PageOf(DeliveryLocationResponse) })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListDeliveryLocationsQuery): Promise<Page<DeliveryLocationResponse>> {
    return this.locations.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a delivery location' })
  @ApiOkResponse({ type: DeliveryLocationResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<DeliveryLocationResponse> {
    return this.locations.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a delivery location (admin)' })
  @ApiCreatedResponse({ type: DeliveryLocationResponse })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  create(@CurrentScope() scope: AccessScope, @Body() body: CreateDeliveryLocationDto): Promise<DeliveryLocationResponse> {
    return this.locations.create(scope, body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a delivery location (admin; partial body allowed; null clears address/latitude/longitude)' })
  @ApiOkResponse({ type: DeliveryLocationResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  update(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Body() body: UpdateDeliveryLocationDto,
  ): Promise<DeliveryLocationResponse> {
    return this.locations.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a delivery location (admin); answers the deleted location' })
  @ApiOkResponse({ type: DeliveryLocationResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({
    description:
      'Still used: `{"detail":"Delivery location is still referenced by trackers"}` or `{"detail":"Delivery location is still referenced by tracker status history"}`',
  })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<DeliveryLocationResponse> {
    return this.locations.delete(scope, id);
  }
}
