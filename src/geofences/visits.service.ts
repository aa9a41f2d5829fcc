import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { PLACE_ERRORS } from '../places/places.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { toVisitResponse, type ListVisitsQuery, type VisitResponse } from './visit.dto.js';
import { VisitsRepository, type VisitsOf } from './visits.repository.js';

/** Visits of a tracker or at a location: visible trackers only, newest entered_at first. */
@Injectable()
export class VisitsService {
  constructor(private readonly visits: VisitsRepository) {}

  async ofTracker(scope: AccessScope, trackerId: number, query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    if (!(await this.visits.trackerVisible(scope, trackerId))) throw new DomainError(TRACKER_ERRORS.trackerNotFound);
    return this.page(scope, { trackerId }, query);
  }

  async atLocation(
    scope: AccessScope,
    type: 'storage' | 'delivery',
    locationId: number,
    query: ListVisitsQuery,
  ): Promise<Page<VisitResponse>> {
    if (!(await this.visits.locationExists(type, locationId))) {
      throw new DomainError(
        type === 'storage' ? PLACE_ERRORS.storageLocationNotFound : PLACE_ERRORS.deliveryLocationNotFound,
      );
    }
    return this.page(
      scope,
      type === 'storage' ? { storageLocationId: locationId } : { deliveryLocationId: locationId },
      query,
    );
  }

  private async page(scope: AccessScope, of: VisitsOf, query: ListVisitsQuery): Promise<Page<VisitResponse>> {
    const { rows, total } = await this.visits.page(scope, of, { confirmed: query.confirmed, open: query.open }, query);
    return toPage(rows.map(toVisitResponse), total, query);
  }
}
