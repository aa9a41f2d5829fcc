import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import type { RebuildProgress } from '../locations/location-rebuild.service.js';
import { GeofenceMetrics } from './geofence-metrics.js';
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
    private readonly metrics: GeofenceMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Replays every tracker (or the one asked for) with the locations as they are now, one
   * transaction per tracker; returns how many it replayed (0 when `trackerId` is unknown).
   */
  async rebuild(options: { trackerId?: number; progress?: RebuildProgress } = {}): Promise<number> {
    const ids = await this.repository.trackerIds(options.trackerId);
    options.progress?.start?.(ids.length);
    for (const [i, id] of ids.entries()) {
      await this.replayTracker(id);
      options.progress?.advance?.(i + 1);
    }
    return ids.length;
  }

  /**
   * `afterWrite` runs inside the transaction, after the replay's writes (the worker clears its mark
   * there, so mark and result commit together). `markedAt`: when the tracker was marked (for the lag metric).
   */
  async replayTracker(trackerId: number, afterWrite?: () => Promise<void>, markedAt?: Date): Promise<ReplayOutcome> {
    const done = await this.db.transaction(async () => {
      const tracker = await this.repository.lockTracker(trackerId);
      if (!tracker) {
        await afterWrite?.();
        return null;
      }
      const input = await this.repository.loadInput(trackerId, this.config.geofenceDwellMinutes);
      const result = replay(input.reports, input.manual);
      const changed = signature(result.entries) !== input.storedAutomatic;
      const before = await this.repository.writeResult(trackerId, result.visits, result.entries, changed);
      await afterWrite?.();
      return { runId: tracker.production_run_id, input, result, changed, before };
    });
    if (!done) return { found: false, visits: 0, automaticEntries: 0, changed: false };
    const { runId, input, result, changed, before } = done;
    if (changed) await this.invalidation.trackersChanged([runId]);
    this.metrics.replayed(
      { ...before, entries: input.storedAutomaticCount },
      { visits: result.visits.length, confirmed: result.visits.filter((v) => v.confirmed).length, entries: result.entries.length },
      markedAt ? (Date.now() - markedAt.getTime()) / 1000 : null,
    );
    return { found: true, visits: result.visits.length, automaticEntries: result.entries.length, changed };
  }
}
