import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PeriodicJob } from '../infrastructure/scheduling/periodic-job.js';
import { AlertCheckRepository } from './alert-check.repository.js';
import { AlertMetrics } from './alert-metrics.js';

export type AlertCheckRun = { ran: false } | { ran: true; opened: number; resolved: number; durationMs: number };

/**
 * The periodic alert check: every instance wakes up every ALERT_CHECK_SECONDS (start to start) and
 * tries the check's advisory lock; the one that gets it opens and resolves alerts for the whole fleet
 * (see AlertCheckRepository), the others skip that round. Writes that end a condition (a report, a
 * battery level, a tracker leaving transit or storage) resolve their alerts themselves at once;
 * the rest changes within one interval.
 */
@Injectable()
export class AlertCheckService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(AlertCheckService.name);
  private readonly job: PeriodicJob<AlertCheckRun>;

  constructor(
    private readonly repository: AlertCheckRepository,
    private readonly metrics: AlertMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.job = new PeriodicJob(() => this.run(), {
      what: 'alert check',
      logger: this.logger,
      intervalMs: config.alerts.checkSeconds * 1000,
      // Start to start: an alert opens within one interval (plus the check's own duration) of its
      // condition, however long the previous check took.
      fixedRate: true,
      onResult: (result) => {
        if (result.ran && result.opened + result.resolved > 0) this.logger.log(result);
      },
    });
  }

  onApplicationBootstrap(): void {
    if (!this.config.alerts.enabled) {
      this.logger.log('Alerts are off (ALERTS_ENABLED=false): no check runs');
      return;
    }
    // Spread over the first interval, so instances started together do not all try at once.
    this.job.start(Math.floor(Math.random() * this.config.alerts.checkSeconds * 1000));
  }

  onModuleDestroy(): Promise<unknown> {
    return this.job.stop();
  }

  /** One check now, unless one is in progress in this process (its result answers) or another instance holds the lock. */
  runOnce(): Promise<AlertCheckRun> {
    return this.job.runNow();
  }

  private async run(): Promise<AlertCheckRun> {
    const started = performance.now();
    const checked = await this.repository.check({
      silentHours: this.config.alerts.silentHours,
      batteryPercent: this.config.alerts.batteryPercent,
    });
    if (checked === null) return { ran: false };
    const durationMs = performance.now() - started;
    this.metrics.checked(durationMs / 1000, checked.opened.length, checked.resolved.length);
    return { ran: true, opened: checked.opened.length, resolved: checked.resolved.length, durationMs };
  }
}
