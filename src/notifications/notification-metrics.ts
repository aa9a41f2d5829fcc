import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { Db, sql } from '../infrastructure/database/db.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { scrapedCounter } from '../infrastructure/metrics/scraped-metric.js';

/**
 * Prometheus metrics of notifications. Events and notifications are written by the database (in
 * the transaction of the change), so their totals are read from the tables' id sequences when
 * scraped: database-wide, the same on every instance (aggregate with max, not sum; ids of rolled
 * back transactions count too). Streams are this instance's own.
 */
@Injectable()
export class NotificationMetrics {
  private readonly open: Gauge;
  private readonly delivered: Counter;
  private readonly latency: Histogram;

  constructor(metrics: MetricsService, db: Db) {
    const registers = [metrics.registry];
    const totals = async () =>
      db
        .one<{ events: string; notifications: string }>(
          sql`SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM notification_events_id_seq)::text AS events,
                     (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM notifications_id_seq)::text AS notifications`,
        )
        .then((row) => ({ events: Number(row.events), notifications: Number(row.notifications) }))
        .catch(() => null);
    scrapedCounter(registers, {
      name: 'notification_events_total',
      help: 'Status-change events written (database-wide, from the id sequence)',
      read: async () => (await totals())?.events ?? null,
    });
    scrapedCounter(registers, {
      name: 'notifications_total',
      help: 'In-app notifications written, one per recipient of an event (database-wide, from the id sequence)',
      read: async () => (await totals())?.notifications ?? null,
    });
    this.open = new Gauge({
      name: 'notification_streams_open',
      help: 'Notification streams (SSE) open on this instance',
      registers,
    });
    this.delivered = new Counter({
      name: 'notification_stream_deliveries_total',
      help: 'Notifications written to streams of this instance (replays included)',
      registers,
    });
    this.latency = new Histogram({
      name: 'notification_stream_delivery_seconds',
      help: 'From the start of the transaction that made a notification to its live delivery on a stream',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    });
  }

  streamOpened(): void {
    this.open.inc();
  }

  streamClosed(): void {
    this.open.dec();
  }

  deliveredOne(createdAt: string | null): void {
    this.delivered.inc();
    if (createdAt) this.latency.observe(Math.max(0, (Date.now() - Date.parse(createdAt)) / 1000));
  }
}
