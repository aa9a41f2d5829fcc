import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import { RevocationService } from '../auth/revocation.service.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PeriodicJob } from '../infrastructure/scheduling/periodic-job.js';
import { MaintenanceRepository } from './maintenance.repository.js';
import { ReportPartitionsRepository } from './report-partitions.repository.js';

/** pg advisory lock key of the maintenance job (any constant unique within the database). */
export const MAINTENANCE_LOCK_KEY = 727_275;
/** Every instance wakes up this often; the advisory lock lets one of them work. */
const MAINTENANCE_INTERVAL_MS = 10 * 60_000;
/** First run after boot (not at once: a rolling deploy should not start every instance's job together). */
const FIRST_RUN_DELAY_MS = 60_000;
/** Raw reports deleted per statement, and at most this many statements per run. */
const RETENTION_BATCH_SIZE = 5000;
const MAX_BATCHES_PER_RUN = 200;
/** Sent and failed e-mails (and the lists of events they carried) are kept this long. */
const MAIL_RETENTION_DAYS = 30;
/** Days after today whose raw-report partition exists ahead (the migration creates the same). */
export const PARTITION_AHEAD_DAYS = 7;
/** A day with at least this many reports in the default partition gets a partition of its own. */
export const SPLIT_MIN_ROWS = 10_000;
const MAX_SPLITS_PER_RUN = 10;

export type MaintenanceRun =
  | { ran: false }
  | {
      ran: true;
      /** Raw reports deleted row by row (reports of dropped partitions are not counted). */
      reportsDeleted: number;
      batches: number;
      partitionsCreated: number;
      partitionsDropped: number;
      revokedTokensPurged: number;
      notificationsPurged: number;
      mailPurged: number;
      webhookDeliveriesPurged: number;
      durationMs: number;
    };

interface RetentionOutcome {
  reportsDeleted: number;
  batches: number;
  partitionsDropped: number;
}

/**
 * Periodic housekeeping (on one instance at a time, via a PostgreSQL advisory lock):
 * - raw-report partitions: the daily partitions of location_reports up to PARTITION_AHEAD_DAYS
 *   after today exist (a day's reports parked in the default partition move into it), and a day
 *   with SPLIT_MIN_ROWS reports in the default partition gets its own;
 * - raw-report retention: with RAW_RETENTION_DAYS > 0, location reports received more than that
 *   many days ago go (the hourly/daily aggregates stay). A day's partition whose range ended
 *   before that limit and which holds no report received after it is dropped whole; older reports
 *   anywhere else (a partition with late arrivals, the default partition) are deleted in bounded
 *   batches;
 * - revoked token ids whose token has expired anyway are purged;
 * - in-app notifications (and their events) older than NOTIFICATION_RETENTION_DAYS are deleted,
 *   in bounded batches;
 * - sent and failed e-mails finished more than MAIL_RETENTION_DAYS ago are deleted;
 * - webhook deliveries older than NOTIFICATION_RETENTION_DAYS are deleted, in bounded batches.
 * Every instance runs the timer; `pg_try_advisory_lock` on the job's own connection lets exactly
 * one of them do the work, and the lock is released with the session if that instance dies.
 */
@Injectable()
export class MaintenanceService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MaintenanceService.name);
  private readonly job = new PeriodicJob(() => this.run(RETENTION_BATCH_SIZE), {
    what: 'maintenance run',
    logger: this.logger,
    intervalMs: MAINTENANCE_INTERVAL_MS,
    onResult: (result) => {
      if (
        result.ran &&
        result.reportsDeleted +
          result.partitionsCreated +
          result.partitionsDropped +
          result.revokedTokensPurged +
          result.notificationsPurged +
          result.mailPurged +
          result.webhookDeliveriesPurged >
          0
      )
        this.logger.log(result);
    },
  });

  constructor(
    private readonly db: DataSource,
    private readonly repository: MaintenanceRepository,
    private readonly partitions: ReportPartitionsRepository,
    private readonly revocations: RevocationService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.job.start(FIRST_RUN_DELAY_MS + Math.floor(Math.random() * 10_000));
  }

  /** A run in progress stops after its current batch (shutdown must fit in 10 s) and is awaited. */
  onModuleDestroy(): Promise<unknown> {
    return this.job.stop();
  }

  /**
   * One run, if no other instance (or call) is running it; `{ran:false}` otherwise. Exposed so
   * tests and operators can trigger it.
   */
  runOnce(options: { batchSize?: number } = {}): Promise<MaintenanceRun> {
    return this.job.runNow(() => this.run(options.batchSize ?? RETENTION_BATCH_SIZE));
  }

  private async run(batchSize: number): Promise<MaintenanceRun> {
    const started = Date.now();
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      if (!(await this.repository.tryLock(runner, MAINTENANCE_LOCK_KEY))) return { ran: false };
      try {
        let partitionsCreated = await this.addDays(
          runner,
          await this.partitions.missingDays(runner, PARTITION_AHEAD_DAYS),
        );
        const days = this.config.rawRetentionDays;
        const retention =
          days > 0
            ? await this.applyRetention(runner, days, batchSize)
            : { reportsDeleted: 0, batches: 0, partitionsDropped: 0 };
        if (!this.job.stopped)
          partitionsCreated += await this.addDays(
            runner,
            await this.partitions.crowdedDefaultDays(runner, SPLIT_MIN_ROWS, MAX_SPLITS_PER_RUN),
          );
        const revokedTokensPurged = await this.revocations.purgeExpired();
        let notificationsPurged = 0;
        for (let round = 0; round < MAX_BATCHES_PER_RUN && !this.job.stopped; round++) {
          const deleted = await this.repository.deleteNotificationsOlderThan(
            runner,
            this.config.notificationRetentionDays,
            batchSize,
          );
          notificationsPurged += deleted;
          if (deleted < batchSize) break;
        }
        let mailPurged = 0;
        for (let deleted = batchSize; deleted === batchSize && !this.job.stopped;) {
          deleted = await this.repository.deleteFinishedMailOlderThan(runner, MAIL_RETENTION_DAYS, batchSize);
          mailPurged += deleted;
        }
        let webhookDeliveriesPurged = 0;
        for (let round = 0, deleted = batchSize; deleted === batchSize && round < MAX_BATCHES_PER_RUN; round++) {
          if (this.job.stopped) break;
          deleted = await this.repository.deleteWebhookDeliveriesOlderThan(
            runner,
            this.config.notificationRetentionDays,
            batchSize,
          );
          webhookDeliveriesPurged += deleted;
        }
        return {
          ran: true,
          ...retention,
          partitionsCreated,
          revokedTokensPurged,
          notificationsPurged,
          mailPurged,
          webhookDeliveriesPurged,
          durationMs: Date.now() - started,
        };
      } finally {
        await this.repository.unlock(runner, MAINTENANCE_LOCK_KEY);
      }
    } finally {
      await runner.release();
    }
  }

  private async addDays(runner: QueryRunner, days: string[]): Promise<number> {
    let created = 0;
    for (const day of days) {
      if (this.job.stopped) break;
      if (await this.partitions.addDay(runner, day)) created += 1;
    }
    return created;
  }

  /**
   * Deletes exactly the raw reports received before now − `days` days (as of the start of the run):
   * whole partitions where that is all they hold, row by row elsewhere, at most
   * MAX_BATCHES_PER_RUN row-level statements per run.
   */
  private async applyRetention(runner: QueryRunner, days: number, batchSize: number): Promise<RetentionOutcome> {
    const outcome: RetentionOutcome = { reportsDeleted: 0, batches: 0, partitionsDropped: 0 };
    const cutoff = await this.repository.retentionCutoff(runner, days);
    for (const partition of await this.partitions.list(runner)) {
      if (this.job.stopped || outcome.batches >= MAX_BATCHES_PER_RUN) break;
      const { oldest, newest } = await this.partitions.receivedRange(runner, partition.name);
      if (oldest === null || newest === null || oldest >= cutoff) continue;
      if (partition.to !== null && partition.to <= cutoff && newest < cutoff) {
        const dropped = await this.partitions.dropIfAllReceivedBefore(runner, partition.name, cutoff);
        if (dropped === 'dropped') outcome.partitionsDropped += 1;
        // 'busy': the next run tries again rather than deleting a whole day row by row.
        if (dropped !== 'kept') continue;
      }
      while (outcome.batches < MAX_BATCHES_PER_RUN && !this.job.stopped) {
        const deleted = await this.partitions.deleteReceivedBefore(runner, partition.name, cutoff, batchSize);
        outcome.batches += 1;
        outcome.reportsDeleted += deleted;
        if (deleted < batchSize) break;
      }
    }
    return outcome;
  }
}
