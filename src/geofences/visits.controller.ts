import { Controller, Query } from '@nestjs/common';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PLACE_ERRORS } from '../places/places.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { NestedList } from '../common/http/nested-list.decorator.js';
import type { Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { ListVisitsQuery, VisitResponse } from './visit.dto.js';
import { VisitsService } from './visits.service.js';

/** Visits of a tracker or at a location: visible trackers only, newest entered_at first. */
@Controller()
@Access('admin', 'user')
export class VisitsController {
  constructor(private readonly visits: VisitsService) {}

  @NestedList(
    'trackers/:id/visits',
    "A tracker's visits to storage and delivery locations",
    VisitResponse,
    TRACKER_ERRORS.trackerNotFound,
    ERRORS.validationFailed,
  )
  ofTracker(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: ListVisitsQuery,
  ): Promise<Page<VisitResponse>> {
    return this.visits.ofTracker(scope, id, query);
  }

  @NestedList(
    'storage-locations/:id/visits',
    'Visits of visible trackers at this storage location',
    VisitResponse,
    PLACE_ERRORS.storageLocationNotFound,
    ERRORS.validationFailed,
  )
  atStorage(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: ListVisitsQuery,
  ): Promise<Page<VisitResponse>> {
    return this.visits.atLocation(scope, 'storage', id, query);
  }

  @NestedList(
    'delivery-locations/:id/visits',
    'Visits of visible trackers at this delivery location',
    VisitResponse,
    PLACE_ERRORS.deliveryLocationNotFound,
    ERRORS.validationFailed,
  )
  atDelivery(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: ListVisitsQuery,
  ): Promise<Page<VisitResponse>> {
    return this.visits.atLocation(scope, 'delivery', id, query);
  }
}
