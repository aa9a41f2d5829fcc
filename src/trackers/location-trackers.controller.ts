import { Controller, Query } from '@nestjs/common';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PLACE_ERRORS } from '../places/places.errors.js';
import { NestedList } from '../common/http/nested-list.decorator.js';
import type { Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { DeliveryLocationTrackersQuery, LocationTrackersQuery } from './dto/list-trackers.query.js';
import { TrackerResponse } from './dto/tracker.response.js';
import { TrackerListsService } from './tracker-lists.service.js';

/** Trackers seen from a location: visible trackers only, each with its latest location. */
@Controller()
@Access('admin', 'user')
export class LocationTrackersController {
  constructor(private readonly trackers: TrackerListsService) {}

  @NestedList(
    'storage-locations/:id/trackers',
    'Trackers currently IN_STORAGE at this storage location',
    TrackerResponse,
    PLACE_ERRORS.storageLocationNotFound,
  )
  atStorage(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: LocationTrackersQuery,
  ): Promise<Page<TrackerResponse>> {
    return this.trackers.atStorageLocation(scope, id, query);
  }

  @NestedList(
    'delivery-locations/:id/trackers',
    'Trackers whose destination is this delivery location (optional status filter)',
    TrackerResponse,
    PLACE_ERRORS.deliveryLocationNotFound,
  )
  forDelivery(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: DeliveryLocationTrackersQuery,
  ): Promise<Page<TrackerResponse>> {
    return this.trackers.forDeliveryLocation(scope, id, query);
  }
}
