import { Injectable } from '@nestjs/common';
import { CacheService } from './cache.service.js';

/**
 * What cached reads depend on. Readers name these areas in `CacheService.key`; writers never do:
 * they report what changed to CacheInvalidation, which knows which areas that touches.
 */
export const CACHE_AREAS = {
  /** Tracker lists, counts and status counts (any scope). */
  trackers: 'trackers',
  /** One production run's analytics. */
  runAnalytics: (runId: number) => `analytics:run:${runId}`,
} as const;

/**
 * The one place that turns "this changed" into cache invalidation. Every method bumps generation
 * tokens in the shared store, so every instance stops using the old entries at once; call it
 * after the transaction committed, so no instance can re-cache the old state.
 */
@Injectable()
export class CacheInvalidation {
  constructor(private readonly cache: CacheService) {}

  /**
   * Trackers or their status entries changed in these runs (create, update, move, delete, status
   * entry, import), or the runs' trackers changed scope (a brand or run moved to another client):
   * tracker lists and counts, and each run's analytics.
   */
  trackersChanged(runIds: Iterable<number>): Promise<void> {
    return this.cache.bump(CACHE_AREAS.trackers, ...[...new Set(runIds)].map(CACHE_AREAS.runAnalytics));
  }

  /** Fields a run's analytics show changed (its description or dates, a location name). */
  runsChanged(runIds: Iterable<number>): Promise<void> {
    const areas = [...new Set(runIds)].map(CACHE_AREAS.runAnalytics);
    return areas.length ? this.cache.bump(...areas) : Promise.resolve();
  }
}
