import type { DataSource } from 'typeorm';
import type { CreatedUser } from './factories.js';
import { closeApps, createPeerApp, createTestAppWith, type TestApp, type TestAppOptions } from './app.js';

export const TRACKERS = '/api/v1/trackers';

/** Two clients with a run each, an admin, a user scoped to client A, an ingest account and locations. */
export interface TrackerWorld {
  admin: CreatedUser;
  userA: CreatedUser;
  ingest: CreatedUser;
  clientA: { id: number };
  clientB: { id: number };
  runA: { id: number; brand_id: number; client_id: number; description: string };
  runA2: { id: number; brand_id: number; client_id: number; description: string };
  runB: { id: number; brand_id: number; client_id: number; description: string };
  storage: { id: number; name: string };
  storage2: { id: number; name: string };
  delivery: { id: number; name: string };
  delivery2: { id: number; name: string };
}

export async function trackerWorld(t: TestApp): Promise<TrackerWorld> {
  const f = t.factories;
  const [clientA, clientB] = [await f.client(), await f.client()];
  const brandA = await f.brand(clientA.id);
  return {
    admin: await f.admin(),
    userA: await f.user({ clients: [clientA.id] }),
    ingest: await f.ingest(),
    clientA,
    clientB,
    runA: await f.run({ brandId: brandA.id }),
    runA2: await f.run({ brandId: brandA.id }),
    runB: await f.run({ clientId: clientB.id }),
    storage: await f.storageLocation(),
    storage2: await f.storageLocation(),
    delivery: await f.deliveryLocation(),
    delivery2: await f.deliveryLocation(),
  };
}

/** A test app with a tracker world in it: `({ t, w } = await createTrackerWorld())` in a beforeAll. */
export function createTrackerWorld(options: TestAppOptions = {}): Promise<{ t: TestApp; w: TrackerWorld }> {
  return createTestAppWith(options, async (t) => ({ w: await trackerWorld(t) }));
}

/**
 * Two instances of the service on one database (and one cache namespace), both built with `options`,
 * and a tracker world made through the first: `({ a, b, w } = await createTwoInstances())`; close
 * them with `closeApps(b, a)`.
 */
export async function createTwoInstances(
  options: TestAppOptions = {},
): Promise<{ a: TestApp; b: TestApp; w: TrackerWorld }> {
  const { t: a, b } = await createTestAppWith(options, async (t) => ({ b: await createPeerApp(t, options) }));
  try {
    return { a, b, w: await trackerWorld(a) };
  } catch (error) {
    await closeApps(b, a).catch(() => undefined);
    throw error;
  }
}

/** POST /trackers as `auth`: a tracker with a fresh name in run `runId` (201 expected); answers its body. */
export async function postTracker(app: TestApp, auth: { Authorization: string }, runId: number) {
  const name = `TRK-${Math.random().toString(36).slice(2, 8)}`;
  return (await app.http().post(TRACKERS).set(auth).send({ name, production_run_id: runId }).expect(201)).body;
}

/** POST /trackers/{id}/status as the world's admin (201 expected); IN_STORAGE is into the world's `storage`. */
export function postStatus(app: TestApp, w: TrackerWorld, trackerId: number, status = 'IN_TRANSIT') {
  return app
    .http()
    .post(`${TRACKERS}/${trackerId}/status`)
    .set(w.admin.auth)
    .send({ status, ...(status === 'IN_STORAGE' ? { storage_location_id: w.storage.id } : {}) })
    .expect(201);
}

/**
 * Puts an aggregated hourly point in place (as the Locations pipeline would), so the latest
 * location of a tracker is known without going through ingestion.
 */
export async function insertHourlyPoint(
  db: DataSource,
  trackerId: number,
  point: {
    bucket: string;
    reportedAt?: string;
    latitude: number;
    longitude: number;
    confidence?: number;
    reportId?: number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      trackerId,
      point.bucket,
      point.reportId ?? 1,
      point.reportedAt ?? point.bucket,
      point.latitude,
      point.longitude,
      point.confidence ?? 3,
    ],
  );
}

export async function insertDailyPoint(
  db: DataSource,
  trackerId: number,
  point: { bucket: string; reportedAt?: string; latitude: number; longitude: number; confidence?: number },
): Promise<void> {
  await db.query(
    `INSERT INTO location_history_daily (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
     VALUES ($1, $2, 1, $3, $4, $5, $6)`,
    [trackerId, point.bucket, point.reportedAt ?? point.bucket, point.latitude, point.longitude, point.confidence ?? 3],
  );
}

/** Multipart upload of `content` as field `file` to the import route. */
export function uploadCsv(t: TestApp, auth: { Authorization: string }, content: string | Buffer, query = '') {
  return t
    .http()
    .post(`${TRACKERS}/import-csv${query ? `?${query}` : ''}`)
    .set(auth)
    .attach('file', Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'), {
      filename: 'trackers.csv',
      contentType: 'text/csv',
    });
}

export async function countRows(
  db: DataSource,
  table: 'trackers' | 'tracker_status_history',
  where = 'TRUE',
  params: unknown[] = [],
): Promise<number> {
  const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params);
  return n;
}
