import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { replicaStalenessBoundMs } from '../database/read-replicas.js';
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
  /** An API key by its prefix (a trigger sends it when the key is created, revoked, changed or deleted). */
  apiKey: (prefix: string) => `api-key:${prefix}`,
  /**
   * That an IP is not throttled for API keys (no trigger: the instance whose count crosses the
   * limit sends it on the bus, so every other one reads the shared count again).
   */
  apiKeyIpClear: (ip: string) => `api-key-ip:${ip}`,
  /** A share link by the hex of its token's hash (a trigger sends it when the link is created, revoked, changed or deleted). */
  shareLink: (tokenHashHex: string) => `share-link:${tokenHashHex}`,
} as const;

/**
 * The one place that turns "this changed" into cache invalidation. Generations are bumped in the
 * shared store and the in-process copies dropped on every instance (InvalidationBus); call it after
 * the transaction committed, so no instance can re-cache the old state.
 */
@Injectable()
export class CacheInvalidation implements OnModuleDestroy {
  /** Second invalidations waiting, by area (see `bump`). */
  private readonly again = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly cache: TieredCache,
    private readonly near: NearCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Trackers or their status entries changed in these runs (create, update, move, delete, status
   * entry, import), or the runs' trackers changed scope (a brand or run moved to another client):
   * tracker lists and counts, and each run's analytics.
   */
  trackersChanged(runIds: Iterable<number>): Promise<void> {
    return this.bump([CACHE_AREAS.trackers, ...[...new Set(runIds)].map(CACHE_AREAS.runAnalytics)]);
  }

  /** Fields a run's analytics show changed (its description or dates, a location name). */
  runsChanged(runIds: Iterable<number>): Promise<void> {
    const areas = [...new Set(runIds)].map(CACHE_AREAS.runAnalytics);
    return areas.length ? this.bump(areas) : Promise.resolve();
  }

  /**
   * An ingest batch changed the location aggregates. The trigger's message reaches every instance,
   * this one included, but asynchronously; dropping this instance's latest-locations generation at
   * once means a client that lists right after its own ingest response sees its reports.
   */
  locationsChanged(): void {
    this.near.invalidate([`gen:${CACHE_AREAS.latestLocations}`]);
  }

  onModuleDestroy(): void {
    for (const timer of this.again.values()) clearTimeout(timer);
    this.again.clear();
  }

  /**
   * Bumps now and, with read replicas, once more when every replica that may still serve reads has
   * replayed the write (replicaStalenessBoundMs): a cached read that
   * missed right after the first bump may have been filled from a replica that had not replayed the
   * write yet, and would otherwise be served until its TTL. A later bump of the same area postpones
   * the second one (each bump already retires what was cached before it).
   */
  private async bump(areas: string[]): Promise<void> {
    await this.cache.bump(...areas);
    if (this.config.databaseReadUrls.length === 0) return;
    const delayMs = replicaStalenessBoundMs(this.config);
    for (const area of areas) {
      clearTimeout(this.again.get(area));
      const timer = setTimeout(() => {
        this.again.delete(area);
        void this.cache.bump(area);
      }, delayMs);
      timer.unref();
      this.again.set(area, timer);
    }
  }

  /**
   * A user row changed or was deleted. The database trigger tells every instance; this drops the
   * copy here at once, so the instance that made the change never answers with the old row.
   */
  userChanged(userId: number): void {
    this.near.invalidate([NEAR_KEYS.user(userId)]);
  }

  /** An API key was revoked (or changed): as userChanged, this instance drops its copy at once. */
  apiKeyChanged(prefix: string): void {
    this.near.invalidate([NEAR_KEYS.apiKey(prefix)]);
  }

  /** A share link was revoked: as userChanged, this instance drops its copy at once. */
  shareLinkChanged(tokenHashHex: string): void {
    this.near.invalidate([NEAR_KEYS.shareLink(tokenHashHex)]);
  }
}
