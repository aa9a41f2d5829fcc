import { Injectable, Logger } from '@nestjs/common';
import { AccessScope } from '../common/auth/access-scope.js';
import { LocationIngestionService } from './location-ingestion.service.js';
import { HOUR_MS, DAY_MS, hourBucket } from '../location-reports/location-rules.js';
import { MAX_REPORTS_PER_BATCH } from './report-batch.js';
import { Db, sql } from '../infrastructure/database/db.js';

interface DemoReport {
  tracker_id: number;
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
  accuracy_m: number;
  source: string;
}

/** Small deterministic PRNG so a tracker's demo trail is the same shape on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
}

/** Trail start points outside the manufacturing region (Europe and North America). */
const ORIGINS = [
  [51.95, 4.05],
  [53.54, 9.98],
  [41.88, -87.63],
  [48.86, 2.35],
  [40.74, -73.99],
];

/**
 * Demo location reports for the trackers already in the database (the demo seed): a trail per
 * tracker with hourly points for the last days and daily points before, plus low-confidence
 * reports, reports inside the manufacturing-region box, and late, out-of-order reports sent in a
 * second pass (which must not move the history). Everything goes through the real ingestion path.
 */
@Injectable()
export class LocationsDemoSeeder {
  private readonly logger = new Logger(LocationsDemoSeeder.name);

  constructor(
    private readonly db: Db,
    private readonly ingestion: LocationIngestionService,
  ) {}

  async seed(now: Date = new Date()): Promise<{ reports: number }> {
    const trackers = await this.db.rows<{ id: number }>(sql`SELECT id FROM trackers ORDER BY id`);
    const onTime: DemoReport[] = [];
    const late: DemoReport[] = [];
    const end = hourBucket(now.getTime());
    for (const { id } of trackers) {
      const next = random(id * 2_654_435_761);
      const [lat0, lon0] = ORIGINS[id % ORIGINS.length];
      let lat = lat0 + (next() - 0.5) * 2;
      let lon = lon0 + (next() - 0.5) * 2;
      const report = (at: number, confidence: number, source = 'gps'): DemoReport => ({
        tracker_id: id,
        timestamp: new Date(at).toISOString(),
        latitude: round(lat),
        longitude: round(lon),
        confidence,
        accuracy_m: round(5 + next() * 40),
        source,
      });
      // Daily-resolution past: one report a day from 30 to 8 days ago.
      for (let day = 30; day >= 8; day--) {
        lat += (next() - 0.5) * 0.4;
        lon += (next() - 0.5) * 0.4;
        onTime.push(report(end - day * DAY_MS + Math.floor(next() * DAY_MS), 2 + Math.floor(next() * 3)));
      }
      // Recent: a report every 3 hours for the last 6 days.
      for (let at = end - 6 * DAY_MS; at <= end; at += 3 * HOUR_MS) {
        lat += (next() - 0.5) * 0.05;
        lon += (next() - 0.5) * 0.05;
        // At least a minute into the hour, so the late report below is always older; never in the future.
        onTime.push(
          report(
            Math.min(at + 60_000 + Math.floor(next() * (HOUR_MS - 60_000)), now.getTime()),
            2 + Math.floor(next() * 3),
          ),
        );
      }
      // Low-confidence fixes (stored, never aggregated).
      onTime.push(report(end - 2 * HOUR_MS + 5 * 60_000, 1, 'cell'), report(end - 26 * HOUR_MS, 0, 'cell'));
      // Every fifth tracker also reports from inside the manufacturing region (excluded).
      if (id % 5 === 0) {
        onTime.push({ ...report(end - 5 * HOUR_MS + 59 * 60_000, 4), latitude: 22.54, longitude: 114.06 });
        onTime.push({ ...report(end - 3 * DAY_MS, 3), latitude: 31.23, longitude: 121.47 });
      }
      // Late arrivals: older than the hour's winner, sent afterwards; the history must not change.
      late.push(report(end - 3 * HOUR_MS, 3, 'late-sync'));
    }
    const scope = AccessScope.admin();
    let stored = 0;
    for (const reports of [onTime, late]) {
      for (let from = 0; from < reports.length; from += MAX_REPORTS_PER_BATCH) {
        const result = await this.ingestion.ingest(scope, reports.slice(from, from + MAX_REPORTS_PER_BATCH));
        stored += result.accepted;
      }
    }
    this.logger.log(`Demo location reports: ${stored} stored for ${trackers.length} trackers`);
    return { reports: stored };
  }
}

function round(value: number): number {
  return Math.round(value * 1e5) / 1e5;
}
