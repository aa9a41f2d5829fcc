import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PeriodicJob } from '../infrastructure/scheduling/periodic-job.js';
import { GeofencePendingRepository, type PendingClaim } from './geofence-pending.repository.js';
import { GeofenceProcessor } from './geofence-processor.service.js';

/** Idle poll period of every instance's worker; a pass that found work polls again at once. */
export const GEOFENCE_POLL_MS = 200;
const CLAIM_BATCH = 50;
/** Replays one instance runs at once (fewer with a small pool: a third of it at most). */
const MAX_LANES = 3;

/**
 * Works the geofence queue on every instance: claims marked trackers (each by one instance at a
 * time), replays them and clears their marks. Marks are written with the reports and entries
 * that caused them, so a restart, a crash or a slow pass never loses work: an unclaimed or lapsed
 * mark is picked up by the next pass of any instance. Off with GEOFENCE_ENABLED=false.
 */
@Injectable()
export class GeofenceWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(GeofenceWorker.name);
  private readonly job = new PeriodicJob(() => this.pass(), { what: 'geofence pass', logger: this.logger, intervalMs: GEOFENCE_POLL_MS });

  constructor(
    private readonly pending: GeofencePendingRepository,
    private readonly processor: GeofenceProcessor,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.geofenceEnabled) this.job.start(0);
  }

  onModuleDestroy(): Promise<unknown> {
    return this.job.stop();
  }

  /** One pass: claims and replays until the queue is empty (or the worker stops); returns how many trackers it replayed. */
  drain(): Promise<number> {
    return this.job.runNow();
  }

  private get stopped(): boolean {
    return this.job.stopped;
  }

  private async pass(): Promise<number> {
    let replayed = 0;
    while (!this.stopped) {
      const claims = await this.pending.claim(CLAIM_BATCH);
      if (claims.length === 0) break;
      // A few trackers at a time (each in its own transaction), leaving most of the pool to requests.
      const lanes = Math.max(1, Math.min(MAX_LANES, Math.floor(this.config.dbPoolSize / 3)));
      let next = 0;
      const lane = async () => {
        while (next < claims.length) {
          const claim = claims[next++];
          if (await this.replayOne(claim)) replayed++;
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
    }
    return replayed;
  }

  private async replayOne(claim: PendingClaim): Promise<boolean> {
    if (this.stopped) {
      await this.pending.release(claim.tracker_id);
      return false;
    }
    try {
      await this.processor.replayTracker(claim.tracker_id, { afterWrite: () => this.pending.finish(claim), markedAt: claim.marked_at, fromMicros: claim.from_us });
      return true;
    } catch (error) {
      // The claim lapses after CLAIM_SECONDS and the tracker is retried then (not at once: a
      // tracker that keeps failing must not keep the worker busy).
      this.logger.warn(`geofence replay of tracker ${claim.tracker_id} failed: ${(error as Error).message}`);
      return false;
    }
  }
}
