import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RevocationService } from '../auth/revocation.service.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { MaintenanceRepository } from './maintenance.repository.js';

/** pg advisory lock key of the maintenance job (any constant unique within the database). */
export const MAINTENANCE_LOCK_KEY = 727_275;
/** Every instance wakes up this often; the advisory lock lets one of them work. */
export const MAINTENANCE_INTERVAL_MS = 10 * 60_000;
/** First run after boot (not at once: a rolling deploy should not start every instance's job together). */
const FIRST_RUN_DELAY_MS = 60_000;
/** Raw reports deleted per statement, and at most this many statements per run. */
export const RETENTION_BATCH_SIZE = 5000;
const MAX_BATCHES_PER_RUN = 200;
/** Sent and failed e-mails (and the lists of events they carried) are kept this long. */
export const MAIL_RETENTION_DAYS = 30;

export type MaintenanceRun =
  | { ran: false }
  | { ran: true; reportsDeleted: number; batches: number; revokedTokensPurged: number; mailPurged: number; durationMs: number };

/**
 * Periodic housekeeping (on one instance at a time, via a PostgreSQL advisory lock):
 * - raw-report retention: with RAW_RETENTION_DAYS > 0, location reports received more than that
 *   many days ago are deleted in bounded batches (the hourly/daily aggregates stay);
 * - sent and failed e-mails finished more than MAIL_RETENTION_DAYS ago are deleted;
 * - revoked token ids whose token has expired anyway are purged.
 * Every instance runs the timer; `pg_try_advisory_lock` on the job's own connection lets exactly
 * one of them do the work, and the lock is released with the session if that instance dies.
 */
@Injectable()
export class MaintenanceService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MaintenanceService.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<MaintenanceRun> | null = null;
  private stopping = false;

  constructor(
    private readonly db: DataSource,
    private readonly repository: MaintenanceRepository,
    private readonly revocations: RevocationService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(FIRST_RUN_DELAY_MS + Math.floor(Math.random() * 10_000));
  }

  onModuleDestroy(): Promise<unknown> | void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // A run in progress stops after its current batch (shutdown must fit in 10 s) and is awaited.
    this.stopping = true;
    return this.running?.catch(() => undefined);
  }

  /**
   * One run, if no other instance (or call) is running it; `{ran:false}` otherwise. Exposed so
   * tests and operators can trigger it.
   */
  runOnce(options: { batchSize?: number } = {}): Promise<MaintenanceRun> {
    this.running ??= this.run(options.batchSize ?? RETENTION_BATCH_SIZE).finally(() => (this.running = null));
    return this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      void this.runOnce()
        .then((result) => {
          if (result.ran && (result.reportsDeleted > 0 || result.revokedTokensPurged > 0 || result.mailPurged > 0)) this.logger.log(result);
        })
        .catch((error: unknown) => this.logger.warn(`maintenance run failed: ${(error as Error).message}`))
        .finally(() => {
          if (this.timer) this.schedule(MAINTENANCE_INTERVAL_MS);
        });
    }, delayMs);
    this.timer.unref();
  }

  private async run(batchSize: number): Promise<MaintenanceRun> {
    const started = Date.now();
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      if (!(await this.repository.tryLock(runner, MAINTENANCE_LOCK_KEY))) return { ran: false };
      try {
        let reportsDeleted = 0;
        let batches = 0;
        const days = this.config.rawRetentionDays;
        while (days > 0 && batches < MAX_BATCHES_PER_RUN && !this.stopping) {
          const deleted = await this.repository.deleteReportsOlderThan(runner, days, batchSize);
          batches += 1;
          reportsDeleted += deleted;
          if (deleted < batchSize) break;
        }
        const revokedTokensPurged = await this.revocations.purgeExpired();
        let mailPurged = 0;
        for (let deleted = batchSize; deleted === batchSize && !this.stopping; ) {
          deleted = await this.repository.deleteFinishedMailOlderThan(runner, MAIL_RETENTION_DAYS, batchSize);
          mailPurged += deleted;
        }
        return { ran: true, reportsDeleted, batches, revokedTokensPurged, mailPurged, durationMs: Date.now() - started };
      } finally {
        await this.repository.unlock(runner, MAINTENANCE_LOCK_KEY);
      }
    } finally {
      await runner.release();
    }
  }
}
