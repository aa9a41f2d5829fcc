import { Controller, Get, NotFoundException, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PageOf, toPage, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { sql, type Sql } from '../infrastructure/database/db.js';
import { ListVisitsQuery, toVisitResponse, VisitResponse } from './visit.dto.js';
import { VisitsRepository } from './visits.repository.js';

const INVALID = 'Invalid id or query: `{"detail":"Validation failed: ...","errors":[...]}`';

/** Visits of a tracker or at a location: visible trackers only, newest entered_at first. */
@Controller()
@Access('admin', 'user')
export class VisitsController {
  constructor(private readonly visits: VisitsRepository) {}

  @Get('trackers/:id/visits')
  @ApiTags('trackers')
  @ApiOperation({ summary: "A tracker's visits to storage and delivery locations" })
  @ApiOkResponse({ type: PageOf(VisitResponse) })
  @ApiNotFoundResponse({ description: '`{"detail":"Tracker not found"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  async ofTracker(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    if (!(await this.visits.trackerVisible(scope, id))) throw new NotFoundException({ detail: 'Tracker not found' });
    return this.page(scope, sql`v.tracker_id = ${id}`, query);
  }

  @Get('storage-locations/:id/visits')
  @ApiTags('storage-locations')
  @ApiOperation({ summary: 'Visits of visible trackers at this storage location' })
  @ApiOkResponse({ type: PageOf(VisitResponse) })
  @ApiNotFoundResponse({ description: '`{"detail":"Storage location not found"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  async atStorage(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    if (!(await this.visits.locationExists('storage', id))) throw new NotFoundException({ detail: 'Storage location not found' });
    return this.page(scope, sql`v.storage_location_id = ${id}`, query);
  }

  @Get('delivery-locations/:id/visits')
  @ApiTags('delivery-locations')
  @ApiOperation({ summary: 'Visits of visible trackers at this delivery location' })
  @ApiOkResponse({ type: PageOf(VisitResponse) })
  @ApiNotFoundResponse({ description: '`{"detail":"Delivery location not found"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  async atDelivery(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Query() query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    if (!(await this.visits.locationExists('delivery', id))) throw new NotFoundException({ detail: 'Delivery location not found' });
    return this.page(scope, sql`v.delivery_location_id = ${id}`, query);
  }

  private async page(scope: AccessScope, at: Sql, query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    const { rows, total } = await this.visits.page(scope, at, { confirmed: query.confirmed, open: query.open }, query);
    return toPage(rows.map(toVisitResponse), total, query);
  }
}
