import type { Role } from '../../src/common/auth/roles.js';
import type { TestApp } from './app.js';
import type { CreatedUser } from './factories.js';
import { bilevelPng } from './images.js';

/** Fixtures and row type of the role-matrix test. */

/** Who makes a request: one of the roles, or nobody (no Authorization header). */
export type Caller = Role | 'anonymous';

/** Real resources the rows point at, created once in beforeAll. */
export interface MatrixFixtures {
  client: number;
  brand: number;
  run: number;
  /** A tracker of `run` with a status history (CREATED → IN_TRANSIT → IN_STORAGE) and location reports. */
  tracker: number;
  storage: number;
  delivery: number;
  /** Uploaded through the API by the scoped user. */
  image: { id: number; storage_filename: string };
  /** One throwaway resource per destructive admin-only row (DELETE). */
  spare: {
    client: number;
    brand: number;
    run: number;
    storage: number;
    delivery: number;
    tracker: number;
    user: number;
  };
  /** A user whose record the admin may update. */
  otherUser: number;
  /** Images each allowed role may delete: the admin any image, a user only one they uploaded. */
  deletableImage: Record<'admin' | 'user', number>;
}

type PerCaller<T> = (fx: MatrixFixtures, caller: Caller) => T;

/**
 * One row of the matrix: a route (OpenAPI template path) and the roles that may call it
 * (`'public'`: no token needed). `status` is the exact answer expected by a caller who gets
 * through — rows point at real, visible resources, so a scoped user must get the same success
 * as the admin. Params, query, body and upload may depend on the caller so that a write by one
 * role does not collide with the next (unique names, one deletable resource per role).
 */
export interface MatrixRow {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  allowed: readonly Role[] | 'public';
  status: number;
  params?: PerCaller<Record<string, string | number>>;
  query?: string;
  body?: PerCaller<object>;
  upload?: PerCaller<{ bytes: Buffer; filename: string; contentType: string }>;
}

export const ROLES: readonly Role[] = ['admin', 'user', 'ingest'];

export const rowName = (row: Pick<MatrixRow, 'method' | 'path'>) => `${row.method.toUpperCase()} ${row.path}`;

/** True when `path` is `prefix` itself or below it. */
export const underPrefix = (path: string, prefixes: readonly string[]) =>
  prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

export function sendRow(
  t: TestApp,
  row: MatrixRow,
  fx: MatrixFixtures,
  caller: Caller,
  headers: Record<string, string>,
) {
  const params = row.params?.(fx, caller) ?? {};
  const path = row.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${rowName(row)}: no value for {${name}}`);
    return encodeURIComponent(String(params[name]));
  });
  const http = t.http();
  const req = http[row.method](row.query ? `${path}?${row.query}` : path).set(headers);
  if (row.upload) {
    const file = row.upload(fx, caller);
    return req.attach('file', file.bytes, { filename: file.filename, contentType: file.contentType });
  }
  return row.body ? req.send(row.body(fx, caller)) : req;
}

export const tinyPng = () => bilevelPng(2, 2);

/** A location report for the fixture tracker, an hour ago (eligible: Berlin, confidence 3). */
/** The device id of the fixtures' tracker (the device protocol rows report under it). */
export const MATRIX_DEVICE_ID = 'matrix-device';

export const reportOneHourAgo = () => ({
  timestamp: new Date(Date.now() - 3_600_000).toISOString(),
  latitude: 52.52,
  longitude: 13.405,
  confidence: 3,
});

/**
 * Builds the fixtures: reference data and the tracker through the factories (SQL), location
 * reports and images through the API, as callers do.
 */
export async function createMatrixFixtures(
  t: TestApp,
  callers: Record<Role, CreatedUser>,
  clientId: number,
): Promise<MatrixFixtures> {
  const f = t.factories;
  const brand = await f.brand(clientId);
  const run = await f.run({ brandId: brand.id });
  const storage = await f.storageLocation();
  const delivery = await f.deliveryLocation();
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
  const tracker = await f.tracker({
    runId: run.id,
    deliveryLocationId: delivery.id,
    createdAt: day(3),
    history: [
      { status: 'CREATED', timestamp: day(3) },
      { status: 'IN_TRANSIT', timestamp: day(2) },
      { status: 'IN_STORAGE', timestamp: day(1), storageLocationId: storage.id },
    ],
  });
  await t.db.query('UPDATE trackers SET device_id = $1 WHERE id = $2', [MATRIX_DEVICE_ID, tracker.id]);
  await t
    .http()
    .post('/api/v1/locations/reports')
    .set(callers.ingest.auth)
    .send({ reports: [{ tracker_id: tracker.id, ...reportOneHourAgo(), timestamp: day(1) }] })
    .expect(200);

  const upload = async (who: CreatedUser) => {
    const res = await t
      .http()
      .post('/api/v1/images')
      .set(who.auth)
      .attach('file', tinyPng(), { filename: 'matrix.png', contentType: 'image/png' })
      .expect(201);
    const [row] = await t.db.query<{ storage_filename: string }[]>(
      `SELECT storage_filename FROM images WHERE id = $1`,
      [res.body.id],
    );
    return { id: res.body.id as number, storage_filename: row.storage_filename };
  };
  const image = await upload(callers.user);
  const deletableImage = { admin: (await upload(callers.user)).id, user: (await upload(callers.user)).id };

  // Spares nothing references, so an admin DELETE succeeds (a referenced row would answer 409).
  const spareClient = await f.client();
  const spareBrand = await f.brand(clientId);
  const spareRun = await f.run({ brandId: brand.id });
  const spareTracker = await f.tracker({ runId: run.id });
  const spareUser = await f.user();
  const otherUser = await f.user();
  return {
    client: clientId,
    brand: brand.id,
    run: run.id,
    tracker: tracker.id,
    storage: storage.id,
    delivery: delivery.id,
    image,
    deletableImage,
    otherUser: otherUser.id,
    spare: {
      client: spareClient.id,
      brand: spareBrand.id,
      run: spareRun.id,
      storage: (await f.storageLocation()).id,
      delivery: (await f.deliveryLocation()).id,
      tracker: spareTracker.id,
      user: spareUser.id,
    },
  };
}
