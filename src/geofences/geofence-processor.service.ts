import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { replay } from './geofence-replay.js';
import { GeofenceRepository, signature } from './geofence.repository.js';

export interface ReplayOutcome {
  /** False when the tracker no longer exists. */
  found: boolean;
  visits: number;
  automaticEntries: number;
  /** Whether the automatic entries (and so possibly the tracker's status) changed. */
  changed: boolean;
}

/**
 * Replays one tracker: reads its eligible reports, nearby locations and manual entries, computes
 * its visits and automatic entries (geofence-replay.ts) and stores them, in one transaction that
 * holds the tracker's row lock (manual entries and deletes of the tracker wait, and wait for it).
 * The replay always starts from the tracker's first report, so its result never depends on the
 * order in which reports arrived or on what an earlier replay stored.
 */
@Injectable()
export class GeofenceProcessor {
  constructor(
    private readonly db: Db,
    private readonly repository: GeofenceRepository,
    private readonly invalidation: CacheInvalidation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `afterCommit` runs inside the transaction, after the replay's writes (the worker clears its mark there). */
  async replayTracker(trackerId: number, afterWrite?: () => Promise<void>): Promise<ReplayOutcome> {
    const outcome = await this.db.transaction(async () => {
      const tracker = await this.repository.lockTracker(trackerId);
      if (!tracker) {
        await afterWrite?.();
        return { found: false, visits: 0, automaticEntries: 0, changed: false, runId: 0 };
      }
      const input = await this.repository.loadInput(trackerId, this.config.geofenceDwellMinutes);
      const result = replay(input.reports, input.manual);
      const changed = signature(result.entries) !== input.storedAutomatic;
      await this.repository.writeResult(trackerId, result.visits, result.entries, changed);
      await afterWrite?.();
      return { found: true, visits: result.visits.length, automaticEntries: result.entries.length, changed, runId: tracker.production_run_id };
    });
    if (outcome.changed) await this.invalidation.trackersChanged([outcome.runId]);
    const { runId: _runId, ...rest } = outcome;
    return rest;
  }
}
