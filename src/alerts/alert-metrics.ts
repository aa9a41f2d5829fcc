import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';

/** Prometheus metrics of the alert check (the instance that ran it). */
@Injectable()
export class AlertMetrics {
  private readonly duration: Histogram;
  private readonly transitions: Counter<'change'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.duration = new Histogram({
      name: 'alert_check_duration_seconds',
      help: 'Duration of the periodic alert checks this instance ran',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.transitions = new Counter({
      name: 'alert_check_alerts_total',
      help: 'Alerts the periodic check opened or resolved (writes resolve others at once)',
      labelNames: ['change'],
      registers,
    });
    this.transitions.inc({ change: 'opened' }, 0);
    this.transitions.inc({ change: 'resolved' }, 0);
  }

  checked(seconds: number, opened: number, resolved: number): void {
    this.duration.observe(seconds);
    if (opened > 0) this.transitions.inc({ change: 'opened' }, opened);
    if (resolved > 0) this.transitions.inc({ change: 'resolved' }, resolved);
  }
}
