import { Injectable, Logger } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';
import { LocationsDemoSeeder } from '../locations/locations-demo.service.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';
import { TrackerBulkService, type NewStatusEntry, type NewTracker } from '../trackers/tracker-bulk.service.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const FINAL_STATES: TrackerStatus[] = ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'];

type DemoTracker = NewTracker & { finalState: TrackerStatus };

interface DemoReferenceData {
  runIds: number[];
  storageIds: number[];
  deliveryIds: number[];
}

/**
 * Demo data: clients, brands, runs, locations, a few hundred trackers in every state
 * with status histories (storage visits, deliveries), and location reports. Reference rows are a
 * handful of set-based inserts; trackers and their histories go through TrackerBulkService
 * (set-based UNNEST writes), the reports through the real ingestion path (LocationsDemoSeeder).
 */
@Injectable()
export class DemoDataService {
  private readonly logger = new Logger(DemoDataService.name);

  constructor(
    private readonly db: Db,
    private readonly trackers: TrackerBulkService,
    private readonly invalidation: CacheInvalidation,
    private readonly locations: LocationsDemoSeeder,
  ) {}

  async seed(trackersPerRun = 40, now: Date = new Date()): Promise<{ trackers: number }> {
    const { runIds, count } = await this.db.transaction(async () => {
      const reference = await this.insertReferenceData();
      const trackers = demoTrackers(reference, trackersPerRun, now);
      const inserted = await this.trackers.insertTrackers(trackers);
      const ids = await this.db.rows<{ id: number; name: string; production_run_id: number }>(
        sql`SELECT id, name, production_run_id FROM trackers WHERE production_run_id = ANY(${reference.runIds}::int[]) ORDER BY id`,
      );
      const specs = new Map(trackers.map((t) => [`${t.productionRunId}:${t.name}`, t]));
      const entries = ids.flatMap((row, index) =>
        demoHistory(row.id, index, specs.get(`${row.production_run_id}:${row.name}`) as DemoTracker, reference, now),
      );
      await this.trackers.insertHistories(
        entries,
        ids.map((row) => row.id),
      );
      return { runIds: reference.runIds, count: inserted };
    });
    await this.invalidation.trackersChanged(runIds);
    const { reports } = await this.locations.seed(now);
    this.logger.log(`Demo data created: ${count} trackers, ${reports} location reports`);
    return { trackers: count };
  }

  /** 3 clients × 2 brands × 2 runs, 4 storage and 5 delivery locations (suffixed when seeded again). */
  private async insertReferenceData(): Promise<DemoReferenceData> {
    const { n } = await this.db.one<{ n: number }>(sql`SELECT count(*)::int AS n FROM clients`);
    const suffix = n === 0 ? '' : ` #${n + 1}`;
    const runs = await this.db.rows<{ id: number }>(
      sql`WITH c AS (
         INSERT INTO clients (name) SELECT name || ${suffix} FROM unnest(ARRAY['Acme Logistics', 'Borealis Foods', 'Cobalt Devices']) AS name
         RETURNING id, name
       ), b AS (
         INSERT INTO brands (name, client_id)
         SELECT c.name || kind, c.id FROM c CROSS JOIN unnest(ARRAY[' Premium', ' Basic']) AS kind
         RETURNING id, name
       )
       INSERT INTO production_runs (description, brand_id, start_date, end_date)
       SELECT b.name || ' run ' || n, b.id, now() - make_interval(days => 60 + n * 10), CASE WHEN n = 1 THEN now() - interval '20 days' END
         FROM b CROSS JOIN generate_series(1, 2) AS n ORDER BY b.id, n
       RETURNING id`,
    );
    const storage = await this.db.rows<{ id: number }>(
      sql`INSERT INTO storage_locations (name, address, latitude, longitude, radius_m, dwell_minutes)
       SELECT name || ${suffix}, address, lat, lon, radius, dwell FROM (VALUES
         -- Port terminals and warehouses span hundreds of metres; a store is a building.
         ('Rotterdam Hub', 'Maasvlakte 1, Rotterdam', 51.95, 4.05, 1500, NULL),
         ('Hamburg Warehouse', 'Am Hafen 5, Hamburg', 53.54, 9.98, 600, NULL),
         ('Chicago Depot', '200 W Lake St, Chicago', 41.88, -87.63, 300, 30),
         ('Singapore Cold Store', '1 Jurong Port Rd', 1.30, 103.72, 400, NULL)) AS v(name, address, lat, lon, radius, dwell)
       RETURNING id`,
    );
    const delivery = await this.db.rows<{ id: number }>(
      sql`INSERT INTO delivery_locations (name, address, latitude, longitude, radius_m, dwell_minutes)
       SELECT name || ${suffix}, address, lat, lon, radius, dwell FROM (VALUES
         ('Berlin Store', 'Alexanderplatz 1, Berlin', 52.52, 13.41, 150, 15),
         ('Paris Store', 'Rue de Rivoli 10, Paris', 48.86, 2.35, 100, 15),
         ('New York Store', '5th Ave 100, New York', 40.74, -73.99, 100, 15),
         ('London Store', 'Oxford St 1, London', 51.51, -0.14, 120, 15),
         ('Madrid Store', 'Gran Via 1, Madrid', 40.42, -3.70, 150, 15)) AS v(name, address, lat, lon, radius, dwell)
       RETURNING id`,
    );
    return {
      runIds: runs.map((r) => r.id),
      storageIds: storage.map((r) => r.id),
      deliveryIds: delivery.map((r) => r.id),
    };
  }
}

/** Trackers of every run, created ~40 days ago; the final state cycles through the four states. */
function demoTrackers(reference: DemoReferenceData, perRun: number, now: Date): DemoTracker[] {
  return reference.runIds.flatMap((runId, r) =>
    Array.from({ length: perRun }, (_, i) => {
      const n = i + 1;
      return {
        name: `TRK-${runId}-${String(n).padStart(4, '0')}`,
        productionRunId: runId,
        status: 'CREATED' as const,
        storageLocationId: null,
        deliveryLocationId: reference.deliveryIds[(n + r) % reference.deliveryIds.length],
        notes: n % 10 === 0 ? 'demo tracker' : null,
        createdAt: new Date(now.getTime() - 40 * DAY_MS + ((n * 7 + r) % 24) * HOUR_MS),
        finalState: FINAL_STATES[n % 4],
      };
    }),
  );
}

/**
 * The entries after CREATED that lead to the tracker's final state. Some in-transit and delivered
 * trackers pass through a storage location on the way (so analytics has visits to measure).
 */
function demoHistory(
  trackerId: number,
  index: number,
  tracker: DemoTracker,
  reference: DemoReferenceData,
  now: Date,
): (NewStatusEntry & { trackerId: number })[] {
  const start = (tracker.createdAt as Date).getTime();
  const at = (days: number) =>
    new Date(Math.min(start + days * DAY_MS + (index % 11) * HOUR_MS, now.getTime() - HOUR_MS));
  const storageId = reference.storageIds[index % reference.storageIds.length];
  const entry = (status: TrackerStatus, days: number, extra: Partial<NewStatusEntry> = {}) => ({
    trackerId,
    status,
    timestamp: at(days),
    storageLocationId: null,
    deliveryLocationId: null,
    notes: null,
    createdBy: null,
    ...extra,
  });
  const detour = index % 8 < 4;
  switch (tracker.finalState) {
    case 'CREATED':
      return [];
    case 'IN_TRANSIT':
      return detour
        ? [
            entry('IN_TRANSIT', 2),
            entry('IN_STORAGE', 6, { storageLocationId: storageId }),
            entry('IN_TRANSIT', 10 + (index % 5)),
          ]
        : [entry('IN_TRANSIT', 2 + (index % 3))];
    case 'IN_STORAGE':
      return [entry('IN_TRANSIT', 2), entry('IN_STORAGE', 7 + (index % 6), { storageLocationId: storageId })];
    case 'DELIVERED': {
      const delivered = entry('DELIVERED', 20 + (index % 9), { deliveryLocationId: tracker.deliveryLocationId });
      return detour
        ? [
            entry('IN_TRANSIT', 2),
            entry('IN_STORAGE', 8, { storageLocationId: storageId }),
            entry('IN_TRANSIT', 14),
            delivered,
          ]
        : [entry('IN_TRANSIT', 3), delivered];
    }
  }
}
