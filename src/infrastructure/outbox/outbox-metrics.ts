import { Counter, type Registry } from 'prom-client';
import { scrapedGauge } from '../metrics/scraped-metric.js';

export interface OutboxMetricNames {
  claimed: { name: string; help: string };
  sent: { name: string; help: string };
  /** Temporary failures, rescheduled. */
  retried: { name: string; help: string };
  /** Rows given up, labelled `reason`: `expired` (retry policy) and the consumer's own labels. */
  givenUp: { name: string; help: string; reasons: readonly string[] };
  /** Seconds since the oldest pending row became ready (database-wide, read at each scrape). */
  oldestDueAge: { name: string; help: string };
}

/** Prometheus metrics of one outbox: this instance's claims and outcomes, and the queue's age. */
export class OutboxMetrics {
  private readonly claimedCount: Counter;
  private readonly sentCount: Counter;
  private readonly retriedCount: Counter;
  private readonly givenUpCount: Counter<'reason'>;

  constructor(registry: Registry, names: OutboxMetricNames, oldestDueAgeSeconds: () => Promise<number>) {
    const registers = [registry];
    this.claimedCount = new Counter({ ...names.claimed, registers });
    this.sentCount = new Counter({ ...names.sent, registers });
    this.retriedCount = new Counter({ ...names.retried, registers });
    const { reasons, ...givenUp } = names.givenUp;
    this.givenUpCount = new Counter({ ...givenUp, labelNames: ['reason'], registers });
    for (const reason of new Set(['expired', ...reasons])) this.givenUpCount.inc({ reason }, 0);
    scrapedGauge(registers, { ...names.oldestDueAge, read: () => oldestDueAgeSeconds().catch(() => 0) });
  }

  claimed(count: number): void {
    this.claimedCount.inc(count);
  }

  sent(): void {
    this.sentCount.inc();
  }

  retried(): void {
    this.retriedCount.inc();
  }

  givenUp(reason: string): void {
    this.givenUpCount.inc({ reason });
  }
}
