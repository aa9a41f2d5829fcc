import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { DeliveryLocationTrackersQuery, LocationTrackersQuery } from './dto/list-trackers.query.js';
import { TrackerResponse } from './dto/tracker.response.js';
import { TrackersService } from './trackers.service.js';

/** Trackers seen from a location: visible trackers only, each with its latest location. */
@Controller()
@Access('admin', 'user')
export class LocationTrackersController {
  constructor(private readonly trackers: TrackersService) {}

  @Get('storage-locations/:id/trackers')
  @ApiTags('storage-locations')
  @ApiOperation({ summary: 'Trackers currently IN_STORAGE at this storage location' })
  @ApiOkResponse({ type: PageOf(TrackerResponse) })
  @ApiErrors(ERRORS.storageLocationNotFound)
  atStorage(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: LocationTrackersQuery): Promise<Page<TrackerResponse>> {
    return this.trackers.atStorageLocation(scope, id, query);
  }

  @Get('delivery-locations/:id/trackers')
  @ApiTags('delivery-locations')
  @ApiOperation({ summary: 'Trackers whose destination is this delivery location (optional status filter)' })
  @ApiOkResponse({ type: PageOf(TrackerResponse) })
  @ApiErrors(ERRORS.deliveryLocationNotFound)
  forDelivery(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: DeliveryLocationTrackersQuery,
  ): Promise<Page<TrackerResponse>> {
    return this.trackers.forDeliveryLocation(scope, id, query);
  }
}
