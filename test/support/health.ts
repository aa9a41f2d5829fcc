import type { DataSource } from 'typeorm';
import type { TestApp } from './app.js';

/** Every admin-only health route. */
export const HEALTH_ROUTES = [
  '/api/v1/health/basic',
  '/api/v1/health/status',
  '/api/v1/health/pipeline',
  '/api/v1/health/system',
  '/health/db-pool',
];

export const STEP_KEYS = [
  'check_database_connection',
  'check_required_tables',
  'check_views_and_policies',
  'check_aggregation_freshness',
  'check_aggregation_rules',
  'check_cache_store',
  'check_status_consistency',
  'check_geofence_processing',
  'check_notification_delivery',
  'check_webhook_delivery',
  'check_mqtt_ingest',
];

/** ISO 8601 with a numeric UTC offset. */
export const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

export interface ReportSpec {
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
}

/**
 * Stores raw reports with `eligible` computed by the aggregation rules, as the ingest path does
 * (SQL only: the health checks must not depend on the locations module's code).
 */
export async function insertReports(db: DataSource, trackerId: number, reports: ReportSpec[]): Promise<void> {
  await db.query(
    `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
     SELECT $1, ts, lat, lon, conf, conf >= 2 AND NOT (lon BETWEEN 73.6 AND 134.8 AND lat BETWEEN 18.2 AND 53.5)
       FROM unnest($2::timestamptz[], $3::float8[], $4::float8[], $5::int[]) AS u(ts, lat, lon, conf)`,
    [
      trackerId,
      reports.map((r) => r.timestamp),
      reports.map((r) => r.latitude),
      reports.map((r) => r.longitude),
      reports.map((r) => r.confidence),
    ],
  );
}

/** Recomputes both aggregates from raw: per (tracker, UTC bucket) the eligible report with the greatest (timestamp, id). */
export async function rebuildAggregates(db: DataSource): Promise<void> {
  for (const [table, unit] of [
    ['location_history_hourly', 'hour'],
    ['location_history_daily', 'day'],
  ]) {
    await db.query(`DELETE FROM ${table}`);
    await db.query(
      `INSERT INTO ${table} (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       SELECT DISTINCT ON (tracker_id, date_trunc('${unit}', timestamp, 'UTC'))
              tracker_id, date_trunc('${unit}', timestamp, 'UTC'), id, timestamp, latitude, longitude, confidence
         FROM location_reports WHERE eligible
        ORDER BY tracker_id, date_trunc('${unit}', timestamp, 'UTC'), timestamp DESC, id DESC`,
    );
  }
}

/**
 * A small, consistent pipeline: trackers with status histories, reports of every kind (eligible,
 * low confidence, inside the box, several per bucket) and aggregates matching them.
 */
export async function seedConsistentPipeline(t: TestApp): Promise<{ trackerIds: number[] }> {
  const run = await t.factories.run();
  const a = await t.factories.tracker({
    runId: run.id,
    history: [
      { status: 'CREATED', timestamp: '2026-03-01T08:00:00Z' },
      { status: 'IN_TRANSIT', timestamp: '2026-03-02T08:00:00Z' },
    ],
  });
  const b = await t.factories.tracker({ runId: run.id });
  await insertReports(t.db, a.id, [
    { timestamp: '2026-03-02T09:05:00Z', latitude: 52.1, longitude: 4.3, confidence: 3 },
    { timestamp: '2026-03-02T09:45:00Z', latitude: 52.2, longitude: 4.4, confidence: 2 },
    { timestamp: '2026-03-02T09:50:00Z', latitude: 52.9, longitude: 4.9, confidence: 1 },
    { timestamp: '2026-03-02T10:10:00Z', latitude: 31.2, longitude: 121.5, confidence: 5 },
    { timestamp: '2026-03-03T11:00:00Z', latitude: 48.8, longitude: 2.3, confidence: 4 },
  ]);
  await insertReports(t.db, b.id, [
    { timestamp: '2026-03-04T00:30:00Z', latitude: -33.9, longitude: 151.2, confidence: 2 },
  ]);
  await rebuildAggregates(t.db);
  return { trackerIds: [a.id, b.id] };
}

export function expectKeys(value: unknown, keys: string[]): void {
  expect(value).toEqual(expect.any(Object));
  expect(Object.keys(value as object).sort()).toEqual([...keys].sort());
}
