import { Inject, Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { Cached } from '../infrastructure/cache/cache-header.interceptor.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CACHE_AREAS, CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { TieredCache, toCachedJson } from '../infrastructure/cache/tiered-cache.js';
import { Db } from '../infrastructure/database/db.js';
import { isUniqueViolation } from '../infrastructure/database/unique-violation.js';
import { GeofenceQueue } from '../geofences/geofence-queue.port.js';
import { LocationHistoryService } from '../locations/location-history.service.js';
import { TRACKER_STATES, type TrackerStatus } from '../tracker-states/tracker-status.js';
import { isTooFarInFuture } from '../common/http/iso-timestamp.js';
import type {
  DeliveryLocationTrackersQuery,
  ListTrackersQuery,
  LocationTrackersQuery,
} from './dto/list-trackers.query.js';
import type { CreateStatusEntryDto, CreateTrackerDto, UpdateTrackerDto } from './dto/tracker.dto.js';
import {
  toStatusEntryResponse,
  toTrackerDetailResponse,
  toTrackerResponse,
  type StatusCountsResponse,
  type StatusEntryResponse,
  type TrackerDetailResponse,
  type TrackerResponse,
} from './dto/tracker.response.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import { TrackerStatusRepository, type NewStatusEntry } from './tracker-status.repository.js';
import { TrackersRepository, type TrackerFilter } from './trackers.repository.js';
import type { StatusEntryRow } from './trackers.rows.js';
import { assertStatusLocations, entryLocations } from './status-locations.js';

export const trackerNotFound = () => new DomainError(ERRORS.trackerNotFound);
export const runNotFound = () => new DomainError(ERRORS.productionRunNotFound);
const storageLocationNotFound = () => new DomainError(ERRORS.storageLocationNotFound);
const deliveryLocationNotFound = () => new DomainError(ERRORS.deliveryLocationNotFound);
export const trackerNameTaken = (name: string, runId: number) => new DomainError(ERRORS.trackerExists(name, runId));

/**
 * Tracker rules: status/location requirements, the "latest (timestamp, id) wins" status, scoped
 * access, cached lists and counts, and invalidation on every write.
 */
@Injectable()
export class TrackersService {
  constructor(
    private readonly db: Db,
    private readonly trackers: TrackersRepository,
    private readonly statuses: TrackerStatusRepository,
    private readonly references: TrackerReferencesRepository,
    private readonly locations: LocationHistoryService,
    private readonly geofences: GeofenceQueue,
    private readonly cache: TieredCache,
    private readonly invalidation: CacheInvalidation,
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

  async detail(scope: AccessScope, id: number): Promise<TrackerDetailResponse> {
    const row = await this.trackers.findDetail(scope, id);
    if (!row) throw trackerNotFound();
    return toTrackerDetailResponse(row);
  }

  async statusHistory(scope: AccessScope, id: number): Promise<StatusEntryResponse[]> {
    const rows = await this.statuses.statusHistory(scope, id);
    if (!rows) throw trackerNotFound();
    return rows.map(toStatusEntryResponse);
  }

  async create(scope: AccessScope, dto: CreateTrackerDto): Promise<TrackerResponse> {
    const status = dto.status ?? 'CREATED';
    const storageLocationId = dto.storage_location_id ?? null;
    const deliveryLocationId = dto.delivery_location_id ?? null;
    // delivery_location_id is the tracker's destination; the first entry carries it only when DELIVERED.
    assertStatusLocations(status, entryLocations(status, storageLocationId, deliveryLocationId));
    if (dto.status_timestamp && isTooFarInFuture(dto.status_timestamp)) {
      throw RequestValidationException.field('status_timestamp', 'must not be more than 5 minutes in the future');
    }
    const row = await this.db.transaction(async () => {
      if (!(await this.references.isRunVisible(scope, dto.production_run_id))) throw runNotFound();
      await this.requireLocations(storageLocationId, deliveryLocationId);
      const created = await this.trackers.insert(
        scope,
        {
          name: dto.name,
          productionRunId: dto.production_run_id,
          status,
          storageLocationId,
          deliveryLocationId,
          notes: dto.notes ?? null,
          statusTimestamp: dto.status_timestamp ?? null,
        },
        scope.userId,
      );
      if (!created) throw trackerNameTaken(dto.name, dto.production_run_id);
      return created;
    });
    await this.invalidation.trackersChanged([row.production_run_id]);
    return toTrackerResponse(row);
  }

  async update(scope: AccessScope, id: number, dto: UpdateTrackerDto): Promise<TrackerResponse> {
    const { row, runIds } = await this.db.transaction(async () => {
      const current = await this.trackers.findVisible(scope, id, true);
      if (!current) throw trackerNotFound();
      const runId = dto.production_run_id ?? current.production_run_id;
      const name = dto.name ?? current.name;
      if (runId !== current.production_run_id && !(await this.references.isRunVisible(scope, runId)))
        throw runNotFound();
      const statusChanged = dto.status !== undefined && dto.status !== current.status;
      const storageLocationId = dto.storage_location_id ?? null;
      if (storageLocationId !== null && !statusChanged) {
        throw RequestValidationException.field(
          'storage_location_id',
          'is only accepted with a change of status to IN_STORAGE',
        );
      }
      const destination =
        dto.delivery_location_id !== undefined ? dto.delivery_location_id : current.delivery_location_id;
      const locations = statusChanged
        ? entryLocations(dto.status as TrackerStatus, storageLocationId, destination)
        : null;
      if (locations) assertStatusLocations(dto.status as TrackerStatus, locations);
      await this.requireLocations(storageLocationId, dto.delivery_location_id ?? null);
      if (
        (name !== current.name || runId !== current.production_run_id) &&
        (await this.trackers.nameTaken(scope, runId, name, id))
      ) {
        throw trackerNameTaken(name, runId);
      }
      // A new destination together with a new status is one change: one event, recorded by the entry.
      const foldDestination = locations !== null && destination !== current.delivery_location_id;
      if (foldDestination) await this.statuses.pauseStatusEvents(true);
      let updated = await this.trackers
        .update(scope, id, {
          name: dto.name,
          productionRunId: dto.production_run_id,
          deliveryLocationId: dto.delivery_location_id,
          notes: dto.notes,
        })
        .catch((error: unknown) => {
          // The same name taken concurrently since nameTaken() looked: same answer as if it had been there.
          if (isUniqueViolation(error)) throw trackerNameTaken(name, runId);
          throw error;
        });
      if (foldDestination) await this.statuses.pauseStatusEvents(false);
      if (locations) {
        await this.appendEntry(scope, id, {
          status: dto.status as TrackerStatus,
          timestamp: new Date(),
          ...locations,
          notes: null,
          createdBy: scope.userId,
        });
        updated = await this.trackers.findVisible(scope, id);
      }
      if (!updated) throw trackerNotFound();
      return { row: updated, runIds: [current.production_run_id, updated.production_run_id] };
    });
    await this.invalidation.trackersChanged(runIds);
    return toTrackerResponse(row, (await this.locations.latestLocations(scope, [id])).get(id) ?? null);
  }

  async remove(scope: AccessScope, id: number): Promise<TrackerResponse> {
    const deleted = await this.trackers.delete(scope, id);
    if (!deleted) throw trackerNotFound();
    await this.invalidation.trackersChanged([deleted.row.production_run_id]);
    return toTrackerResponse(deleted.row, deleted.latest);
  }

  /**
   * Adds a status entry (any state may follow any state). The tracker row is locked first so
   * concurrent entries for one tracker serialize; the insert and the move of the tracker's
   * current status follow in the same transaction (appendEntry).
   */
  async addStatusEntry(scope: AccessScope, trackerId: number, dto: CreateStatusEntryDto): Promise<StatusEntryResponse> {
    const timestamp = dto.timestamp ?? new Date();
    if (isTooFarInFuture(timestamp))
      throw RequestValidationException.field('timestamp', 'must not be more than 5 minutes in the future');
    const storageLocationId = dto.storage_location_id ?? null;
    const { entry, runId } = await this.db.transaction(async () => {
      const tracker = await this.trackers.findVisible(scope, trackerId, true);
      if (!tracker) throw trackerNotFound();
      const deliveryLocationId =
        dto.delivery_location_id ?? (dto.status === 'DELIVERED' ? tracker.delivery_location_id : null);
      assertStatusLocations(
        dto.status,
        { storageLocationId, deliveryLocationId },
        'is required for DELIVERED when the tracker has no destination',
      );
      await this.requireLocations(storageLocationId, dto.delivery_location_id ?? null);
      const appended = await this.appendEntry(scope, trackerId, {
        status: dto.status,
        timestamp,
        storageLocationId,
        deliveryLocationId,
        notes: dto.notes ?? null,
        createdBy: scope.userId,
      });
      if (!appended) throw trackerNotFound();
      return { entry: appended, runId: tracker.production_run_id };
    });
    await this.invalidation.trackersChanged([runId]);
    return toStatusEntryResponse(entry);
  }

  /**
   * Appends a manual status entry (the caller's transaction holds the tracker's row lock), moves the
   * tracker to its latest entry, and marks it for a geofence replay from the entry's timestamp:
   * automation restarts from every manual entry.
   */
  private async appendEntry(
    scope: AccessScope,
    trackerId: number,
    entry: NewStatusEntry,
  ): Promise<StatusEntryRow | null> {
    const appended = await this.statuses.appendStatusEntry(scope, trackerId, entry);
    if (!appended) return null;
    await this.statuses.followLatestEntry([trackerId]);
    await this.geofences.mark([{ trackerId, fromUs: entry.timestamp.getTime() * 1000 }]);
    return appended;
  }

  private async requireLocations(storageLocationId: number | null, deliveryLocationId: number | null): Promise<void> {
    if (storageLocationId !== null && !(await this.references.locationExists('storage', storageLocationId)))
      throw storageLocationNotFound();
    if (deliveryLocationId !== null && !(await this.references.locationExists('delivery', deliveryLocationId)))
      throw deliveryLocationNotFound();
  }
}
