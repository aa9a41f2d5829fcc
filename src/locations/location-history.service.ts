import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page } from '../common/http/pagination.js';
import type { LocationHistoryQuery } from './dto/location-history.query.js';
import { toLocationPoint, type LocationPoint } from '../location-reports/location-point.js';
import { LocationsRepository } from './locations.repository.js';

/** Reads of the aggregated history: pages for one tracker, latest locations for many. */
@Injectable()
export class LocationHistoryService {
  constructor(private readonly repository: LocationsRepository) {}

  async page(scope: AccessScope, trackerId: number, query: LocationHistoryQuery): Promise<Page<LocationPoint>> {
    if (query.start_date && query.end_date && query.start_date.getTime() > query.end_date.getTime()) {
      throw RequestValidationException.field('start_date', 'must not be after end_date');
    }
    const result = await this.repository.historyPage(scope, trackerId, {
      start: query.start_date,
      end: query.end_date,
      granularity: query.granularity,
      order: query.order,
      skip: query.skip,
      limit: query.limit,
    });
    if (!result) throw new DomainError(TRACKER_ERRORS.trackerNotFound);
    return toPage(result.rows.map(toLocationPoint), result.total, query);
  }

  /**
   * `latest_location` of each visible tracker among `trackerIds`; trackers without an
   * eligible report are absent from the map. One query for the whole list.
   */
  async latestLocations(
    scope: AccessScope,
    trackerIds: readonly number[],
    options: { tolerateLag?: boolean } = {},
  ): Promise<Map<number, LocationPoint>> {
    if (trackerIds.length === 0) return new Map();
    const rows = await this.repository.latestLocations(scope, trackerIds, options);
    return new Map([...rows].map(([id, row]) => [id, toLocationPoint(row)]));
  }
}
