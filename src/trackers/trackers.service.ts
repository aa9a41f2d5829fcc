import { ArrivalEstimatesService } from '../arrival-estimates/arrival-estimates.service.js';
import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { isTooFarInFuture } from '../common/http/iso-timestamp.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { isUniqueViolation } from '../infrastructure/database/sql-state.js';
import { LocationHistoryService } from '../locations/location-history.service.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';
import type { CreateTrackerDto, UpdateTrackerDto } from './dto/tracker.dto.js';
import {
  toTrackerDetailResponse,
  toTrackerResponse,
  type TrackerDetailResponse,
  type TrackerResponse,
} from './dto/tracker.response.js';
import { assertStatusLocations, entryLocations } from './status-locations.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import {
  requireLocations,
  rethrowDeviceIdInUse,
  runNotFound,
  trackerNameTaken,
  trackerNotFound,
} from './tracker-rules.js';
import { TrackerStatusRepository } from './tracker-status.repository.js';
import { TrackersRepository } from './trackers.repository.js';
import { TrackerStatusEntriesService } from './tracker-status-entries.service.js';

/**
 * Tracker rules of one tracker: status/location requirements, the "latest (timestamp, id) wins"
 * status, scoped access and invalidation on every write. Lists and counts are TrackerListsService,
 * status entries TrackerStatusEntriesService.
 */
@Injectable()
export class TrackersService {
  constructor(
    private readonly db: Db,
    private readonly trackers: TrackersRepository,
    private readonly statuses: TrackerStatusRepository,
    private readonly references: TrackerReferencesRepository,
    private readonly locations: LocationHistoryService,
    private readonly invalidation: CacheInvalidation,
    private readonly arrivals: ArrivalEstimatesService,
    private readonly statusEntries: TrackerStatusEntriesService,
  ) {}

  async detail(scope: AccessScope, id: number): Promise<TrackerDetailResponse> {
    const row = await this.trackers.findDetail(scope, id);
    if (!row) throw trackerNotFound();
    const detail = toTrackerDetailResponse(row);
    detail.eta = await this.arrivals.estimate(scope, {
      id: detail.id,
      status: detail.status,
      destinationId: detail.delivery_location_id,
      latestEntryId: detail.status_history.at(-1)?.id ?? null,
    });
    return detail;
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
      await requireLocations(this.references, storageLocationId, deliveryLocationId);
      const created = await this.trackers
        .insert(
          scope,
          {
            name: dto.name,
            productionRunId: dto.production_run_id,
            status,
            storageLocationId,
            deliveryLocationId,
            notes: dto.notes ?? null,
            deviceId: dto.device_id ?? null,
            statusTimestamp: dto.status_timestamp ?? null,
          },
          scope.userId,
        )
        .catch(rethrowDeviceIdInUse(dto.device_id));
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
      await requireLocations(this.references, storageLocationId, dto.delivery_location_id ?? null);
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
          deviceId: dto.device_id,
        })
        .catch(rethrowDeviceIdInUse(dto.device_id))
        .catch((error: unknown) => {
          // The same name taken concurrently since nameTaken() looked: same answer as if it had been there.
          if (isUniqueViolation(error)) throw trackerNameTaken(name, runId);
          throw error;
        });
      if (foldDestination) await this.statuses.pauseStatusEvents(false);
      if (locations) {
        await this.statusEntries.appendManualEntry(scope, id, {
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
}
