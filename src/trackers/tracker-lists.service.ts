import { Inject, Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { Cached } from '../infrastructure/cache/cache-header.interceptor.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CACHE_AREAS } from '../infrastructure/cache/cache-invalidation.js';
import { TieredCache, toCachedJson } from '../infrastructure/cache/tiered-cache.js';
import { LocationHistoryService } from '../locations/location-history.service.js';
import { TRACKER_STATES, type TrackerStatus } from '../tracker-states/tracker-status.js';
import type {
  DeliveryLocationTrackersQuery,
  ListTrackersQuery,
  LocationTrackersQuery,
} from './dto/list-trackers.query.js';
import { toTrackerResponse, type StatusCountsResponse, type TrackerResponse } from './dto/tracker.response.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import { deliveryLocationNotFound, storageLocationNotFound } from './tracker-rules.js';
import { TrackerStatusRepository } from './tracker-status.repository.js';
import { TrackersRepository, type TrackerFilter } from './trackers.repository.js';

/**
 * Tracker reads over many trackers: the cached, scoped list and status counts, and the trackers
 * at a storage or delivery location, with their latest locations.
 */
@Injectable()
export class TrackerListsService {
  constructor(
    private readonly trackers: TrackersRepository,
    private readonly statuses: TrackerStatusRepository,
    private readonly references: TrackerReferencesRepository,
    private readonly locations: LocationHistoryService,
    private readonly cache: TieredCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Cached per (scope, normalized query), as JSON text in both cache tiers. Rows are cached without
   * latest locations; with `include_latest_location` the page with its latest locations is kept
   * in the in-process tier only, under the latest-locations generation that a database trigger
   * invalidates on every write to the location tables (ingest needs no invalidation of its own).
   */
  async list(scope: AccessScope, query: ListTrackersQuery): Promise<Cached<Page<TrackerResponse>>> {
    const filter: TrackerFilter = {
      ids: query.id?.length ? [...new Set(query.id.map(Number))].sort((a, b) => a - b) : undefined,
      productionRunId: query.production_run_id,
      statuses: query.status?.length ? [...new Set(query.status)].sort() : undefined,
      name: query.name ? query.name.toLowerCase() : undefined,
    };
    const key = await this.cache.key('trackers:list', [CACHE_AREAS.trackers], {
      scope: scope.cacheKey,
      id: filter.ids ?? null,
      production_run_id: filter.productionRunId ?? null,
      status: filter.statuses ?? null,
      name: filter.name ?? null,
      sort_by: query.sort_by,
      sort_order: query.sort_order,
      skip: query.skip,
      limit: query.limit,
    });
    const ttl = this.config.cacheTtlSeconds;
    const rows = () => this.cache.json(key, ttl, () => this.computePage(scope, filter, query));
    if (!query.include_latest_location) {
      const { value, hit, again } = await rows();
      return new Cached(value, hit, again);
    }
    const latest = this.cache.localGeneration(CACHE_AREAS.latestLocations);
    let rowsHit = false;
    const withLatest = async () => {
      const page = await rows();
      rowsHit = page.hit;
      const parsed = JSON.parse(page.value.json) as Page<TrackerResponse>;
      return { ...parsed, items: await this.withLatestLocations(scope, parsed.items) };
    };
    // The in-process tier is off (no invalidation channel): latest locations are read every time.
    if (latest === undefined) return new Cached(toCachedJson(JSON.stringify(await withLatest())), rowsHit);
    const { value, hit, again } = await this.cache.local(
      TieredCache.derived(key, CACHE_AREAS.latestLocations, latest),
      ttl,
      withLatest,
    );
    return new Cached(value, hit || rowsHit, again);
  }

  private async computePage(
    scope: AccessScope,
    filter: TrackerFilter,
    query: ListTrackersQuery,
  ): Promise<Page<TrackerResponse>> {
    const [rows, total] = await Promise.all([
      this.trackers.listPage(scope, filter, {
        sortBy: query.sort_by,
        sortOrder: query.sort_order,
        skip: query.skip,
        limit: query.limit,
      }),
      this.cachedCount(scope, filter),
    ]);
    return toPage(
      rows.map((row) => toTrackerResponse(row)),
      total,
      query,
    );
  }

  /**
   * The total of a filtered list does not depend on the page or the sort, so it is cached on its
   * own: paging through a list counts once per generation, not once per page.
   */
  private async cachedCount(scope: AccessScope, filter: TrackerFilter): Promise<number> {
    const key = await this.cache.key('trackers:count', [CACHE_AREAS.trackers], { scope: scope.cacheKey, ...filter });
    const { value } = await this.cache.json(key, this.config.cacheTtlSeconds, () => this.trackers.count(scope, filter));
    return Number(value.json);
  }

  async statusCounts(scope: AccessScope, productionRunId?: number): Promise<Cached<StatusCountsResponse>> {
    const key = await this.cache.key('trackers:status-counts', [CACHE_AREAS.trackers], {
      scope: scope.cacheKey,
      production_run_id: productionRunId ?? null,
    });
    const { value, hit, again } = await this.cache.json(
      key,
      this.config.cacheTtlSeconds,
      async (): Promise<StatusCountsResponse> => {
        const byStatus = await this.statuses.statusCounts(scope, productionRunId);
        const counts = Object.fromEntries(TRACKER_STATES.map((s) => [s, byStatus[s] ?? 0])) as Record<
          TrackerStatus,
          number
        >;
        return { ...counts, total: TRACKER_STATES.reduce((sum, s) => sum + counts[s], 0) };
      },
    );
    return new Cached(value, hit, again);
  }

  /** Trackers currently IN_STORAGE at a storage location, with latest locations. */
  async atStorageLocation(
    scope: AccessScope,
    locationId: number,
    query: LocationTrackersQuery,
  ): Promise<Page<TrackerResponse>> {
    if (!(await this.references.locationExists('storage', locationId))) throw storageLocationNotFound();
    return this.page(scope, { storageLocationId: locationId, statuses: ['IN_STORAGE'] }, query);
  }

  /** Trackers whose destination is a delivery location, with latest locations. */
  async forDeliveryLocation(
    scope: AccessScope,
    locationId: number,
    query: DeliveryLocationTrackersQuery,
  ): Promise<Page<TrackerResponse>> {
    if (!(await this.references.locationExists('delivery', locationId))) throw deliveryLocationNotFound();
    return this.page(
      scope,
      { deliveryLocationId: locationId, statuses: query.status?.length ? query.status : undefined },
      query,
    );
  }

  private async page(
    scope: AccessScope,
    filter: TrackerFilter,
    query: { skip: number; limit: number },
  ): Promise<Page<TrackerResponse>> {
    const { rows, total } = await this.trackers.list(scope, filter, {
      sortBy: 'id',
      sortOrder: 'asc',
      skip: query.skip,
      limit: query.limit,
    });
    return toPage(
      await this.withLatestLocations(
        scope,
        rows.map((row) => toTrackerResponse(row)),
      ),
      total,
      query,
    );
  }

  private async withLatestLocations(scope: AccessScope, items: TrackerResponse[]): Promise<TrackerResponse[]> {
    const latest = await this.locations.latestLocations(
      scope,
      items.map((item) => item.id),
      { tolerateLag: true },
    );
    return items.map((item) => ({ ...item, latest_location: latest.get(item.id) ?? null }));
  }
}
