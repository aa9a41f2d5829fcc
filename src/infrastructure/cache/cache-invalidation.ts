import { Injectable } from '@nestjs/common';
import { NearCache } from './near-cache.js';
import { TieredCache } from './tiered-cache.js';

/**
 * What cached reads depend on. Readers name these areas in `TieredCache.key`; writers never do:
 * they report what changed to CacheInvalidation, which knows which areas that touches.
 */
export const CACHE_AREAS = {
  /** Tracker lists, counts and status counts (any scope). */
  trackers: 'trackers',
  /** One production run's analytics. */
  runAnalytics: (runId: number) => `analytics:run:${runId}`,
  /**
   * Latest locations. Kept only in the in-process tier: a trigger on the location tables sends
   * `gen:latest-locations` on the invalidation channel when any location row changes.
   */
  latestLocations: 'latest-locations',
} as const;

/** Keys of the in-process tier that database triggers invalidate (see the CacheInvalidationNotifications migration). */
export const NEAR_KEYS = {
  /** The row the guard authenticates with (a trigger sends it when the users row changes or goes). */
  user: (userId: number) => `user:${userId}`,
  /** A token's revocation state (a trigger sends it when the jti is inserted into revoked_tokens). */
  revoked: (jti: string) => `revoked:${jti}`,
} as const;

/**
 * The one place that turns "this changed" into cache invalidation. Generations are bumped in the
 * shared store and the in-process copies dropped on every instance (InvalidationBus); call it after
 * the transaction committed, so no instance can re-cache the old state.
 */
@Injectable()
export class CacheInvalidation {
  constructor(
    private readonly cache: TieredCache,
    private readonly near: NearCache,
  ) {}

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

  /**
   * A user row changed or was deleted. The database trigger tells every instance; this drops the
   * copy here at once, so the instance that made the change never answers with the old row.
   */
  userChanged(userId: number): void {
    this.near.invalidate([NEAR_KEYS.user(userId)]);
  }
}
