import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { ArrivalEstimatesRepository, type ArrivalEstimateRow } from './arrival-estimates.repository.js';
import type { ArrivalEstimateResponse } from './dto/arrival-estimate.response.js';

/** How long an estimate may be reused: other trackers' deliveries and the passing time show up within it. */
export const ESTIMATE_TTL_SECONDS = 60;

/** What of the tracker itself an estimate depends on: a change of any of these computes it afresh. */
export interface EstimatedTracker {
  id: number;
  status: string;
  destinationId: number | null;
  /** The tracker's latest status entry (its journey start and state follow from its entries). */
  latestEntryId: number | string | null;
}

const CACHED_NONE = 'none';

/**
 * Arrival estimates from the client's own delivered journeys (see ArrivalEstimatesRepository).
 * Only trackers in transit or in storage with a destination have one. An estimate is kept for up
 * to a minute under the tracker's own state, so the tracker's changes are seen at once and other
 * trackers' within the minute. The caller has already established that `scope` sees the tracker.
 */
@Injectable()
export class ArrivalEstimatesService {
  constructor(
    private readonly estimates: ArrivalEstimatesRepository,
    private readonly cache: CacheService,
  ) {}

  async estimate(scope: AccessScope, tracker: EstimatedTracker): Promise<ArrivalEstimateResponse | null> {
    if ((tracker.status !== 'IN_TRANSIT' && tracker.status !== 'IN_STORAGE') || tracker.destinationId === null)
      return null;
    const key = `eta:${tracker.id}:${tracker.status}:${tracker.destinationId}:${tracker.latestEntryId ?? 0}`;
    const cached = await this.cache.get<ArrivalEstimateResponse | typeof CACHED_NONE>(key);
    if (cached !== undefined) return cached === CACHED_NONE ? null : cached;
    const row = await this.estimates.find(scope, tracker.id);
    const estimate = row === null ? null : toResponse(row);
    await this.cache.set(key, estimate ?? CACHED_NONE, ESTIMATE_TTL_SECONDS);
    return estimate;
  }
}

function toResponse(row: ArrivalEstimateRow): ArrivalEstimateResponse {
  return {
    expected_at: new Date(row.expected_at).toISOString(),
    latest_at: new Date(row.latest_at).toISOString(),
    basis: row.basis,
    sample_size: Number(row.sample_size),
  };
}
