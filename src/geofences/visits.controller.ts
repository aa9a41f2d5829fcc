import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { ListVisitsQuery, VisitResponse } from './visit.dto.js';
import { VisitsService } from './visits.service.js';

/** Visits of a tracker or at a location: visible trackers only, newest entered_at first. */
@Controller()
@Access('admin', 'user')
export class VisitsController {
  constructor(private readonly visits: VisitsService) {}

  @Get('trackers/:id/visits')
  @ApiTags('trackers')
  @ApiOperation({ summary: "A tracker's visits to storage and delivery locations" })
  @ApiOkResponse({ type: PageOf(VisitResponse) })
  @ApiErrors(ERRORS.trackerNotFound, ERRORS.validationFailed)
  ofTracker(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    return this.visits.ofTracker(scope, id, query);
  }

  @Get('storage-locations/:id/visits')
  @ApiTags('storage-locations')
  @ApiOperation({ summary: 'Visits of visible trackers at this storage location' })
  @ApiOkResponse({ type: PageOf(VisitResponse) })
  @ApiErrors(ERRORS.storageLocationNotFound, ERRORS.validationFailed)
  atStorage(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    return this.visits.atLocation(scope, 'storage', id, query);
  }

  @Get('delivery-locations/:id/visits')
  @ApiTags('delivery-locations')
  @ApiOperation({ summary: 'Visits of visible trackers at this delivery location' })
  @ApiOkResponse({ type: PageOf(VisitResponse) })
  @ApiErrors(ERRORS.deliveryLocationNotFound, ERRORS.validationFailed)
  atDelivery(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    return this.visits.atLocation(scope, 'delivery', id, query);
  }
}
