import { Inject, Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { Db } from '../infrastructure/database/db.js';
import type { RebuildProgress } from '../location-reports/rebuild-progress.js';
import { LocationsRepository } from './locations.repository.js';

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
    private readonly db: Db,
    private readonly repository: LocationsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Returns the number of trackers rebuilt (0 when `trackerId` is unknown).
   * With raw retention on (RAW_RETENTION_DAYS > 0) raw reports of old buckets may be gone while their
   * aggregates are the only history left: those rows are kept (`keepPrunedWinners`, default: whether
   * retention is on); everything that still has its raw report is recomputed.
   */
  async rebuild(
    scope: AccessScope,
    options: { trackerId?: number; progress?: RebuildProgress; keepPrunedWinners?: boolean } = {},
  ): Promise<number> {
    const keepPrunedWinners = options.keepPrunedWinners ?? this.config.rawRetentionDays > 0;
    const ids = await this.repository.trackerIdsForRebuild(scope, options.trackerId);
    options.progress?.start?.(ids.length);
    for (let from = 0; from < ids.length; from += TRACKERS_PER_BATCH) {
      const batch = ids.slice(from, from + TRACKERS_PER_BATCH);
      await this.db.transaction(() => this.repository.rebuildTrackers(scope, batch, keepPrunedWinners));
      options.progress?.advance?.(Math.min(from + TRACKERS_PER_BATCH, ids.length));
    }
    return ids.length;
  }
}
