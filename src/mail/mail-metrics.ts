import { Injectable } from '@nestjs/common';
import { OutboxMetrics } from '../infrastructure/outbox/outbox-metrics.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { MailQueueRepository } from './mail-queue.repository.js';

/** Prometheus metrics of e-mail delivery (this instance's sends; the queue age is database-wide). */
@Injectable()
export class MailMetrics extends OutboxMetrics {
  constructor(metrics: MetricsService, queue: MailQueueRepository) {
    super(
      metrics.registry,
      {
        claimed: { name: 'mail_emails_claimed_total', help: 'E-mails claimed for a send attempt' },
        sent: { name: 'mail_emails_sent_total', help: 'E-mails the SMTP server accepted' },
        givenUp: {
          name: 'mail_emails_failed_total',
          help: 'E-mails given up: refused permanently (5xx), retry period over, or recipient deactivated',
          reasons: ['refused', 'expired', 'recipient_inactive'],
        },
        retried: {
          name: 'mail_emails_retried_total',
          help: 'Send attempts that failed temporarily and were rescheduled',
        },
        oldestDueAge: {
          name: 'mail_queue_oldest_age_seconds',
          help: 'Seconds since the window end of the oldest e-mail still waiting to be sent (0 when none)',
        },
      },
      () => queue.outbox.oldestDueAgeSeconds(),
    );
  }
}
