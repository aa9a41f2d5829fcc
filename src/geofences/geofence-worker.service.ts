import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PeriodicJob } from '../infrastructure/scheduling/periodic-job.js';
import { isSerializationConflict } from '../infrastructure/database/sql-state.js';
import { GeofencePendingRepository } from './geofence-pending.repository.js';
import { GeofenceProcessor } from './geofence-processor.service.js';

/** Idle poll period of every instance's worker; a pass that found work polls again at once. */
const GEOFENCE_POLL_MS = 200;
/** Trackers replayed in one transaction per pass at most. */
const PASS_TRACKERS = 1000;
/**
 * A pass that replayed something is followed by the next one no sooner than this after its start:
 * under sustained ingest each pass then covers at least this much of it, so its per-tracker work
 * (start rows, entries, progress, locks) is shared by more reports; a quiet queue still waits at
 * most this long beyond the pass in progress.
 */
const PASS_EVERY_MS = 500;
/** The worker vacuums the queue after passes that replayed something, at most this often. */
const VACUUM_EVERY_MS = 2000;

/**
 * Works the geofence queue on every instance: passes (GeofenceProcessor.pass) that each replay up
 * to PASS_TRACKERS waiting trackers in one transaction and delete their marks in it, until the
 * queue is empty. Each tracker is replayed by one instance at a time (its row lock). Marks are
 * written with the reports and entries that caused them and deleted only with the replay's
 * result, so a restart, a crash or a slow pass never loses work: the next pass of any instance
 * finds them.
 * Off with GEOFENCE_ENABLED=false.
 */
@Injectable()
export class GeofenceWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(GeofenceWorker.name);
  private readonly job = new PeriodicJob(() => this.pass(), {
    what: 'geofence pass',
    logger: this.logger,
    intervalMs: GEOFENCE_POLL_MS,
  });
  private vacuumedAt = 0;

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
      const started = Date.now();
      const done = await this.passOnce();
      replayed += done.replayed;
      if (done.replayed > 0 && Date.now() - this.vacuumedAt > VACUUM_EVERY_MS) {
        this.vacuumedAt = Date.now();
        await this.pending
          .vacuum()
          .catch((error: unknown) =>
            this.logger.debug(`vacuum of the geofence queue skipped: ${(error as Error).message}`),
          );
      }
      // Nothing replayed: the queue is empty, or every waiting tracker is held by another transaction.
      if (done.replayed === 0) break;
      const wait = started + PASS_EVERY_MS - Date.now();
      if (wait > 0 && !this.stopped) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    return replayed;
  }

  /**
   * One pass over the longest-waiting trackers together; when it fails, each of them alone (their
   * marks rewritten one row per tracker first), so one tracker that cannot be replayed does not
   * hold up the others. A tracker that fails alone is
   * held back for RETRY_SECONDS and then replayed from its first report. A pass that collides with
   * a concurrent update of a tracker row (its snapshot predates it) is simply run again.
   */
  private async passOnce(): Promise<{ waiting: number; replayed: number }> {
    try {
      return await this.processor.pass(PASS_TRACKERS);
    } catch (error) {
      if (isSerializationConflict(error)) return { waiting: 1, replayed: 1 };
      this.logger.warn(`geofence pass failed, replaying its trackers one by one: ${(error as Error).message}`);
    }
    await this.pending.explode();
    const candidates = await this.pending.singles(PASS_TRACKERS);
    let replayed = 0;
    for (const trackerId of candidates) {
      if (this.stopped) break;
      try {
        replayed += (await this.processor.pass(1, trackerId)).replayed;
      } catch (error) {
        if (isSerializationConflict(error)) continue;
        this.logger.warn(`geofence replay of tracker ${trackerId} failed: ${(error as Error).message}`);
        await this.pending.holdBack(trackerId);
      }
    }
    return { waiting: candidates.length, replayed };
  }
}
