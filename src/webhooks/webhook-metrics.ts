import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { OutboxMetrics } from '../infrastructure/outbox/outbox-metrics.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/** What one attempt came to. */
export type AttemptResult = 'succeeded' | 'http_error' | 'gone' | 'timeout' | 'network' | 'refused';
const ATTEMPT_RESULTS: readonly AttemptResult[] = ['succeeded', 'http_error', 'gone', 'timeout', 'network', 'refused'];

/** Seconds from the event (the delivery's creation) to its successful delivery: first attempts and retries. */
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400];

/**
 * Prometheus metrics of webhook delivery: the outbox kit's counters (claimed, succeeded, retried,
 * failed by reason, the oldest due delivery's age) plus each attempt's result and the latency from
 * the event to its successful delivery (this instance's deliveries; the queue age is database-wide).
 */
@Injectable()
export class WebhookMetrics extends OutboxMetrics {
  private readonly attempts: Counter<'result'>;
  private readonly latency: Histogram;

  constructor(metrics: MetricsService, queue: WebhookDeliveriesRepository) {
    super(
      metrics.registry,
      {
        claimed: { name: 'webhook_deliveries_claimed_total', help: 'Webhook deliveries claimed for an attempt' },
        sent: { name: 'webhook_deliveries_succeeded_total', help: 'Webhook deliveries answered with a 2xx in time' },
        retried: {
          name: 'webhook_deliveries_retried_total',
          help: 'Webhook attempts that failed and were rescheduled',
        },
        givenUp: {
          name: 'webhook_deliveries_failed_total',
          help: 'Webhook deliveries failed for good: 410 Gone, or retried for 24 hours without success',
          reasons: ['gone', 'expired', 'event_gone', 'webhook_deleted'],
        },
        oldestDueAge: {
          name: 'webhook_queue_oldest_age_seconds',
          help: 'Seconds since the oldest due delivery of an enabled webhook became due (0 when none)',
        },
      },
      () => queue.outbox.oldestDueAgeSeconds(),
    );
    const registers = [metrics.registry];
    this.attempts = new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts by result (http_error: a non-2xx answer other than 410)',
      labelNames: ['result'],
      registers,
    });
    for (const result of ATTEMPT_RESULTS) this.attempts.inc({ result }, 0);
    this.latency = new Histogram({
      name: 'webhook_delivery_latency_seconds',
      help: 'Seconds from an event to its successful webhook delivery (retries included)',
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  attempted(result: AttemptResult): void {
    this.attempts.inc({ result });
  }

  delivered(seconds: number): void {
    this.latency.observe(Math.max(0, seconds));
  }
}
