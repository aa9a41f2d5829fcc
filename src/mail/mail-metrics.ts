import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { scrapedGauge } from '../metrics/scraped-metric.js';
import { MailQueueRepository } from './mail-queue.repository.js';

export type MailFailure = 'refused' | 'expired' | 'recipient_inactive';

/** Prometheus metrics of e-mail delivery (this instance's sends; the queue age is database-wide). */
@Injectable()
export class MailMetrics {
  private readonly sent: Counter;
  private readonly failed: Counter<'reason'>;
  private readonly retried: Counter;

  constructor(metrics: MetricsService, queue: MailQueueRepository) {
    const registers = [metrics.registry];
    this.sent = new Counter({ name: 'mail_emails_sent_total', help: 'E-mails the SMTP server accepted', registers });
    this.failed = new Counter({
      name: 'mail_emails_failed_total',
      help: 'E-mails given up: refused permanently (5xx), retry period over, or recipient deactivated',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['refused', 'expired', 'recipient_inactive']) this.failed.inc({ reason }, 0);
    this.retried = new Counter({
      name: 'mail_emails_retried_total',
      help: 'Send attempts that failed temporarily and were rescheduled',
      registers,
    });
    scrapedGauge(registers, {
      name: 'mail_queue_oldest_age_seconds',
      help: 'Seconds since the window end of the oldest e-mail still waiting to be sent (0 when none)',
      read: () => queue.oldestQueuedAgeSeconds().catch(() => 0),
    });
  }

  recordSent(): void {
    this.sent.inc();
  }

  recordFailed(reason: MailFailure): void {
    this.failed.inc({ reason });
  }

  recordRetry(): void {
    this.retried.inc();
  }
}
