import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';
import { LocationsRepository } from './locations.repository.js';

export interface RebuildProgress {
  /** Called once with the number of trackers, then after every batch with the number done. */
  start?(total: number): void;
  advance?(done: number): void;
}

/** Trackers per transaction: large enough for set-based work, small enough to keep locks short. */
const TRACKERS_PER_BATCH = 200;

/**
 * `locations:rebuild`: recomputes eligibility and both aggregates from the raw reports, one
 * transaction per batch of trackers. The result equals what incremental ingestion maintains, so
 * it repairs aggregates after a rule change, a manual edit or a restore.
 */
@Injectable()
export class LocationRebuildService {
  constructor(
    private readonly db: DataSource,
    private readonly repository: LocationsRepository,
  ) {}

  /** Returns the number of trackers rebuilt (0 when `trackerId` is unknown). */
  async rebuild(scope: AccessScope, options: { trackerId?: number; progress?: RebuildProgress } = {}): Promise<number> {
    const ids = await this.repository.trackerIdsForRebuild(scope, options.trackerId);
    options.progress?.start?.(ids.length);
    for (let from = 0; from < ids.length; from += TRACKERS_PER_BATCH) {
      const batch = ids.slice(from, from + TRACKERS_PER_BATCH);
      await this.db.transaction((m) => this.repository.rebuildTrackers(scope, m, batch));
      options.progress?.advance?.(Math.min(from + TRACKERS_PER_BATCH, ids.length));
    }
    return ids.length;
  }
}
