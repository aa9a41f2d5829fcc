import type { QueryRunner } from 'typeorm';
import type { Tables } from '../../src/infrastructure/database/schema.js';
import { LOCATION_WRITES_LOCK_KEY } from '../../src/location-reports/location-writes-lock.js';
import { createTestAppWith, GEOFENCE_ON, type TestApp } from './app.js';
import { withinBound } from './eventually.js';
import { postReports, report } from './locations.js';
import { trackerWorld, type TrackerWorld } from './trackers.js';

/** Helpers for the geofence tests: places on a small patch of open sea, timestamps, waiting for the worker. */

/** Metres per degree of latitude on the sphere the service measures on. */
export const M_PER_DEG = (6_371_008.8 * Math.PI) / 180;
/** A point of the test area, far from the manufacturing box and from every other location. */
export const ORIGIN = { latitude: -30, longitude: -20 };

/** `metres` north (negative: south) of a point on the origin's meridian. */
export function north(metres: number, from = ORIGIN): { latitude: number; longitude: number } {
  return { latitude: from.latitude + metres / M_PER_DEG, longitude: from.longitude };
}

export const BASE = Date.parse('2026-06-01T00:00:00.000Z');
/** ISO time `minutes` after BASE. */
export const at = (minutes: number): string => new Date(BASE + minutes * 60_000).toISOString();

/** A point of a tracker's timeline: minutes after BASE, where, and any other report fields. */
export type TimelinePoint = [minute: number, where: { latitude: number; longitude: number }, extra?: object];

/** Posts `trackerId`'s reports at those points as one batch sent by `sender`, and expects it accepted. */
export async function sendTimeline(
  t: TestApp,
  sender: { auth: { Authorization: string } },
  trackerId: number,
  points: TimelinePoint[],
): Promise<void> {
  const res = await postReports(
    t,
    sender,
    points.map(([minute, where, extra]) => report(trackerId, at(minute), { ...where, ...extra })),
  );
  expect(res.status).toBe(200);
}

export async function createPlace(
  t: TestApp,
  auth: { Authorization: string },
  kind: 'storage' | 'delivery',
  body: { name?: string; latitude: number; longitude: number; radius_m?: number; dwell_minutes?: number | null },
): Promise<{ id: number; name: string }> {
  const res = await t
    .http()
    .post(`/api/v1/${kind}-locations`)
    .set(auth)
    .send({ name: `${kind}-${Math.random().toString(36).slice(2, 8)}`, ...body });
  if (res.status !== 201) throw new Error(`creating a ${kind} location: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** 50 km south of the origin: outside every place of the standard world. */
export const FAR = north(-50_000);
/** The centre of delivery location D of the standard world. */
export const IN_D = north(20_000);

export interface GeofenceWorld {
  w: TrackerWorld;
  S: { id: number; name: string };
  D: { id: number; name: string };
}

/**
 * The standard world of the geofence tests: a tracker world, storage location S (radius 500 m,
 * dwell 30 min, at the origin) and delivery location D (radius 200 m, dwell 0, 20 km north).
 */
export async function geofenceWorld(t: TestApp): Promise<GeofenceWorld> {
  const w = await trackerWorld(t);
  const S = await createPlace(t, w.admin.auth, 'storage', { ...ORIGIN, radius_m: 500, dwell_minutes: 30 });
  const D = await createPlace(t, w.admin.auth, 'delivery', { ...IN_D, radius_m: 200, dwell_minutes: 0 });
  return { w, S, D };
}

/** A test app with geofence automation on and the standard world in it: `({ t, w, S, D } = await createGeofenceWorld())`. */
export function createGeofenceWorld(): Promise<GeofenceWorld & { t: TestApp }> {
  return createTestAppWith({ env: GEOFENCE_ON }, geofenceWorld);
}

/**
 * Waits until no replay is pending (every mark taken and finished), polling briefly; fails after
 * `timeoutMs` (the service promises results within 2 s of the ingest response).
 */
export async function settled(t: TestApp, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await t.db.query('SELECT count(*)::int AS n FROM geofence_pending');
    if (row.n === 0) return;
    if (Date.now() > deadline) throw new Error(`geofence replays still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** How many queue rows name the tracker (a write's row naming several trackers counts once). */
export async function pendingRows(t: TestApp, trackerId: number): Promise<number> {
  const [row] = await t.db.query(
    'SELECT count(*)::int AS n FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))',
    [trackerId],
  );
  return row.n;
}

export interface EntryView {
  status: string;
  timestamp: string;
  storage_location_id: number | null;
  delivery_location_id: number | null;
  source: string;
}

/** The tracker's status history as the API answers it, reduced to what automation decides. */
export async function history(t: TestApp, auth: { Authorization: string }, trackerId: number): Promise<EntryView[]> {
  const res = await t.http().get(`/api/v1/trackers/${trackerId}/status-history`).set(auth).expect(200);
  return res.body.map((e: EntryView) => ({
    status: e.status,
    timestamp: e.timestamp,
    storage_location_id: e.storage_location_id,
    delivery_location_id: e.delivery_location_id,
    source: e.source,
  }));
}

export const auto = (
  status: string,
  timestamp: string,
  locations: { storage?: number; delivery?: number } = {},
): EntryView => ({
  status,
  timestamp,
  storage_location_id: locations.storage ?? null,
  delivery_location_id: locations.delivery ?? null,
  source: 'geofence',
});

/** A stored visit as the geofence tests read it. */
export type VisitRow = Omit<Tables['geofence_visits'], 'tracker_id'>;

/** A tracker's visits in order of entry. */
export function visitRows(t: TestApp, trackerId: number): Promise<VisitRow[]> {
  return t.db.query(
    'SELECT id, storage_location_id, delivery_location_id, entered_at, last_seen_at, exited_at, report_count, confirmed FROM geofence_visits WHERE tracker_id = $1 ORDER BY entered_at, id',
    [trackerId],
  );
}

/**
 * Runs `body` while another transaction, opened with `query`, stays open (another writer's work
 * in progress); then commits it. `body` gets that transaction's runner.
 */
export async function whileOpen<T>(
  t: TestApp,
  query: string,
  parameters: unknown[],
  body: (runner: QueryRunner) => Promise<T>,
): Promise<T> {
  const runner = t.db.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query(query, parameters);
    const result = await body(runner);
    await runner.commitTransaction();
    return result;
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    await runner.release();
  }
}

/** `body` while the tracker's row is held, as a manual entry or a tracker delete in progress holds it. */
export const whileHeld = <T>(t: TestApp, trackerId: number, body: (runner: QueryRunner) => Promise<T>): Promise<T> =>
  whileOpen(t, 'SELECT 1 FROM trackers WHERE id = $1 FOR UPDATE', [trackerId], body);

/** `body` while an ingest batch is in flight (a transaction holding the location-writes lock shared). */
export const whileIngestInFlight = <T>(t: TestApp, body: (runner: QueryRunner) => Promise<T>): Promise<T> =>
  whileOpen(t, 'SELECT pg_advisory_xact_lock_shared($1)', [LOCATION_WRITES_LOCK_KEY], body);

/** Polls `check` until it holds; fails after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 3000): Promise<void> {
  if (!(await withinBound(check, (ok) => ok, timeoutMs))) throw new Error(`timed out waiting for ${what}`);
}
