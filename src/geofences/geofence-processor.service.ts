import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import type { RebuildProgress } from '../locations/location-rebuild.service.js';
import { GeofenceMetrics, type Counts } from './geofence-metrics.js';
import { GeofenceResumeRepository } from './geofence-resume.repository.js';
import { replay, type Visit } from './geofence-replay.js';
import { GeofenceRepository, signature } from './geofence.repository.js';

export interface ReplayOutcome {
  /** False when the tracker no longer exists. */
  found: boolean;
  /** Whether the automatic entries (and so possibly the tracker's status) changed. */
  changed: boolean;
}

/**
 * Replays one tracker: reads its eligible reports, nearby locations and manual entries, computes
 * its visits and automatic entries (geofence-replay.ts) and stores them, in one transaction that
 * holds the tracker's row lock (manual entries and deletes of the tracker wait, and wait for it).
 * A replay from the first report is a function of what is stored, so its result never depends on
 * the order in which reports arrived; a resumed replay continues exactly where that one would be.
 */
@Injectable()
export class GeofenceProcessor {
  constructor(
    private readonly db: Db,
    private readonly repository: GeofenceRepository,
    private readonly resume: GeofenceResumeRepository,
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
   * Replays one tracker. `afterWrite` runs inside the transaction, after the replay's writes (the
   * worker clears its mark there, so mark and result commit together); `markedAt` feeds the lag
   * metric. `fromMicros`: the earliest time the tracker's mark covers; when it lies after the last
   * report the previous replay took into account, the replay resumes there (reports arriving in
   * order), else it starts from the tracker's first report (late reports, back-dated entries).
   */
  async replayTracker(
    trackerId: number,
    options: { afterWrite?: () => Promise<void>; markedAt?: Date; fromMicros?: string | null } = {},
  ): Promise<ReplayOutcome> {
    const done = await this.db.transaction(async () => {
      const tracker = await this.repository.lockTracker(trackerId);
      if (!tracker) {
        await options.afterWrite?.();
        return null;
      }
      const dwell = this.config.geofenceDwellMinutes;
      const progress = options.fromMicros ? await this.resume.progress(trackerId) : null;
      let counts: { before: Counts; after: Counts; changed: boolean };
      if (progress && Number(options.fromMicros) > progress.micros) {
        const state = await this.resume.stateAt(trackerId, progress, dwell);
        const input = await this.repository.loadInput(trackerId, dwell, progress);
        const result = replay(input.reports, input.manual, state);
        await this.resume.append(trackerId, result.visits, result.entries);
        if (result.entries.length > 0) await this.repository.syncTracker(trackerId);
        if (input.last) await this.resume.saveProgress(trackerId, input.last);
        // Counted over the resumed part: the continued visit before and after, plus what was added.
        counts = { before: tally(state.open ? [state.open] : [], 0), after: tally(result.visits, result.entries.length), changed: result.entries.length > 0 };
      } else {
        const input = await this.repository.loadInput(trackerId, dwell);
        const result = replay(input.reports, input.manual);
        const changed = signature(result.entries) !== input.storedAutomatic;
        const before = await this.repository.writeResult(trackerId, result.visits, result.entries, changed);
        await this.resume.saveProgress(trackerId, input.last);
        counts = { before: { ...before, entries: input.storedAutomaticCount }, after: tally(result.visits, result.entries.length), changed };
      }
      await options.afterWrite?.();
      return { runId: tracker.production_run_id, ...counts };
    });
    if (!done) return { found: false, changed: false };
    if (done.changed) await this.invalidation.trackersChanged([done.runId]);
    this.metrics.replayed(done.before, done.after, options.markedAt ? (Date.now() - options.markedAt.getTime()) / 1000 : null);
    return { found: true, changed: done.changed };
  }
}

function tally(visits: readonly Visit[], entries: number): Counts {
  return { visits: visits.length, confirmed: visits.filter((v) => v.confirmed).length, entries };
}
