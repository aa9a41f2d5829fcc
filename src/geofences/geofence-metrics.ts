import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { Db, sql } from '../infrastructure/database/db.js';
import { scrapedGauge } from '../infrastructure/metrics/scraped-metric.js';
import { MetricsService } from '../metrics/metrics.service.js';

/**
 * Prometheus metrics of geofence automation, registered in the app's registry. A replay recomputes
 * a tracker's visits and entries, so the visit and entry counters add what a replay added over
 * what was stored before (a replay that only moves things adds nothing).
 */
@Injectable()
export class GeofenceMetrics {
  private readonly replays: Counter;
  private readonly visitsOpened: Counter;
  private readonly visitsConfirmed: Counter;
  private readonly automaticEntries: Counter;
  private readonly lag: Histogram;

  constructor(metrics: MetricsService, db: Db) {
    const registers = [metrics.registry];
    // The lag histogram observes a replay only when it ends: while the queue falls behind, this
    // gauge is what shows it (database-wide, every instance's marks).
    scrapedGauge(registers, {
      name: 'geofence_backlog_oldest_seconds',
      help: 'Seconds the oldest queued geofence mark has waited for its replay (0 when none)',
      read: () =>
        db
          .one<{ s: number }>(
            sql`SELECT coalesce(extract(epoch FROM now() - min(marked_at)), 0)::float8 AS s FROM geofence_pending`,
          )
          .then((r) => r.s)
          .catch(() => null),
    });
    this.replays = new Counter({
      name: 'geofence_replays_total',
      help: 'Tracker replays of geofence automation',
      registers,
    });
    this.visitsOpened = new Counter({
      name: 'geofence_visits_opened_total',
      help: 'Visits added by geofence replays',
      registers,
    });
    this.visitsConfirmed = new Counter({
      name: 'geofence_visits_confirmed_total',
      help: 'Confirmed visits added by geofence replays',
      registers,
    });
    this.automaticEntries = new Counter({
      name: 'geofence_automatic_entries_total',
      help: 'Automatic status entries added by geofence replays',
      registers,
    });
    this.lag = new Histogram({
      name: 'geofence_processing_lag_seconds',
      help: 'Time from the write that marked a tracker (reports, manual entry) to the end of its replay',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers,
    });
  }

  replayed(before: Counts, after: Counts, lagSeconds: number | null): void {
    this.replays.inc();
    this.visitsOpened.inc(Math.max(0, after.visits - before.visits));
    this.visitsConfirmed.inc(Math.max(0, after.confirmed - before.confirmed));
    this.automaticEntries.inc(Math.max(0, after.entries - before.entries));
    if (lagSeconds !== null) this.lag.observe(lagSeconds);
  }
}

export interface Counts {
  visits: number;
  confirmed: number;
  entries: number;
}
