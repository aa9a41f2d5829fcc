import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { isTooFarInFuture } from '../common/http/iso-timestamp.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import type { CreateStatusEntryDto } from './dto/tracker.dto.js';
import { toStatusEntryResponse, type StatusEntryResponse } from './dto/tracker.response.js';
import { assertStatusLocations } from './status-locations.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import { requireLocations, trackerNotFound } from './tracker-rules.js';
import { TrackerStatusRepository, type NewStatusEntry } from './tracker-status.repository.js';
import { TrackersRepository } from './trackers.repository.js';
import type { StatusEntryRow } from './trackers.rows.js';
import { GeofenceQueue } from '../geofences/geofence-queue.port.js';

/** A tracker's status history: reading it and adding entries. */
@Injectable()
export class TrackerStatusEntriesService {
  constructor(
    private readonly db: Db,
    private readonly trackers: TrackersRepository,
    private readonly statuses: TrackerStatusRepository,
    private readonly references: TrackerReferencesRepository,
    private readonly invalidation: CacheInvalidation,
    private readonly geofences: GeofenceQueue,
  ) {}

  async statusHistory(scope: AccessScope, id: number): Promise<StatusEntryResponse[]> {
    const rows = await this.statuses.statusHistory(scope, id);
    if (!rows) throw trackerNotFound();
    return rows.map(toStatusEntryResponse);
  }

  /**
   * Adds a status entry (any state may follow any state). The tracker row is locked first so
   * concurrent entries for one tracker serialize; the insert and the move of the tracker's
   * current status follow in the same transaction (appendManualEntry).
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
      await requireLocations(this.references, storageLocationId, dto.delivery_location_id ?? null);
      const appended = await this.appendManualEntry(scope, trackerId, {
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
  async appendManualEntry(
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
}
