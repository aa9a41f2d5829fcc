import type { Role } from '../../src/common/auth/roles.js';
import { createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import {
  createMatrixFixtures,
  reportOneHourAgo,
  MATRIX_DEVICE_ID,
  ROLES,
  rowName,
  sendRow,
  tinyPng,
  underPrefix,
  type Caller,
  type MatrixFixtures,
  type MatrixRow,
} from '../support/role-matrix.js';

export type { RoleMatrixRow } from '../support/auth.js';

/**
 * Role matrix, table-driven: one row per route of the service (method, OpenAPI path,
 * roles that may call it, the status a caller who gets through receives). For each row: no token
 * → 401 "Not authenticated", a bad token → 401 "Could not validate credentials" (both with
 * `WWW-Authenticate: Bearer`); a role not listed → 403 "Not enough permissions"; a listed role →
 * exactly `status` on a real, visible resource (the scoped user has the fixtures' client). Public
 * rows answer `status` without a token and with a bad one alike.
 *
 * To add a route: append its row below; its path must be under COVERED_PREFIXES, and the coverage
 * test fails for any documented route that has no row (or any row whose route is not documented).
 */
const READERS = ['admin', 'user'] as const;
const ADMIN = ['admin'] as const;
const EVERYONE = ['admin', 'user', 'ingest'] as const;
const REPORTERS = ['admin', 'ingest'] as const;

const id = (pick: (fx: MatrixFixtures) => number) => (fx: MatrixFixtures) => ({ id: pick(fx) });
const NO_WEBHOOK = () => ({ id: 2_147_483_000 });
const NO_TOKEN = () => ({ token: 'A'.repeat(43) });
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();

/** Rows for a reference-data resource: reads for admin/user, writes admin-only. */
function referenceRows(
  path: string,
  key: 'client' | 'brand' | 'run' | 'storage' | 'delivery',
  create: (fx: MatrixFixtures, caller: Caller) => object,
  update: object,
): MatrixRow[] {
  return [
    { method: 'get', path, allowed: READERS, status: 200 },
    { method: 'post', path, allowed: ADMIN, status: 201, body: create },
    { method: 'get', path: `${path}/{id}`, allowed: READERS, status: 200, params: id((fx) => fx[key]) },
    {
      method: 'put',
      path: `${path}/{id}`,
      allowed: ADMIN,
      status: 200,
      params: id((fx) => fx[key]),
      body: () => update,
    },
    { method: 'delete', path: `${path}/{id}`, allowed: ADMIN, status: 200, params: id((fx) => fx.spare[key]) },
  ];
}

const ROWS: MatrixRow[] = [
  // auth (public: no token needed, a bad one is ignored); empty bodies are invalid, not unauthorized
  { method: 'post', path: '/api/v1/auth/login', allowed: 'public', status: 422, body: () => ({}) },
  { method: 'post', path: '/api/v1/auth/login/json', allowed: 'public', status: 422, body: () => ({}) },
  { method: 'post', path: '/api/v1/auth/refresh', allowed: 'public', status: 422, body: () => ({}) },
  { method: 'get', path: '/api/v1/auth/refresh-cookie', allowed: 'public', status: 401 },
  { method: 'post', path: '/api/v1/auth/logout', allowed: 'public', status: 200 },
  // users
  { method: 'get', path: '/api/v1/users/me', allowed: EVERYONE, status: 200 },
  {
    method: 'patch',
    path: '/api/v1/users/me',
    allowed: EVERYONE,
    status: 200,
    body: (_fx, caller) => ({ name: `Matrix ${caller}` }),
  },
  { method: 'get', path: '/api/v1/users', allowed: ADMIN, status: 200 },
  {
    method: 'post',
    path: '/api/v1/users',
    allowed: ADMIN,
    status: 201,
    body: (_fx, caller) => ({
      name: 'Matrix',
      email: `matrix-${caller}@example.com`,
      password: 'password123',
      roles: ['user'],
      client_list: [],
    }),
  },
  { method: 'get', path: '/api/v1/users/{id}', allowed: ADMIN, status: 200, params: id((fx) => fx.otherUser) },
  {
    method: 'patch',
    path: '/api/v1/users/{id}',
    allowed: ADMIN,
    status: 200,
    params: id((fx) => fx.otherUser),
    body: () => ({ name: 'Renamed' }),
  },
  { method: 'delete', path: '/api/v1/users/{id}', allowed: ADMIN, status: 200, params: id((fx) => fx.spare.user) },
  // reference data
  ...referenceRows('/api/v1/clients', 'client', (_fx, caller) => ({ name: `matrix-client-${caller}` }), {
    name: 'matrix-client-renamed',
  }),
  ...referenceRows(
    '/api/v1/brands',
    'brand',
    (fx, caller) => ({ name: `matrix-brand-${caller}`, client_id: fx.client }),
    { name: 'matrix-brand-renamed' },
  ),
  ...referenceRows(
    '/api/v1/production-runs',
    'run',
    (fx, caller) => ({ description: `matrix-run-${caller}`, brand_id: fx.brand }),
    { description: 'renamed' },
  ),
  ...referenceRows('/api/v1/storage-locations', 'storage', (_fx, caller) => ({ name: `matrix-storage-${caller}` }), {
    address: 'Pier 1',
  }),
  ...referenceRows('/api/v1/delivery-locations', 'delivery', (_fx, caller) => ({ name: `matrix-delivery-${caller}` }), {
    address: 'Dock 2',
  }),
  {
    method: 'get',
    path: '/api/v1/storage-locations/{id}/trackers',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.storage),
  },
  {
    method: 'get',
    path: '/api/v1/delivery-locations/{id}/trackers',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.delivery),
  },
  {
    method: 'get',
    path: '/api/v1/storage-locations/{id}/visits',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.storage),
  },
  {
    method: 'get',
    path: '/api/v1/delivery-locations/{id}/visits',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.delivery),
  },
  // analytics (read visible data)
  {
    method: 'get',
    path: '/api/v1/production-runs/{id}/analytics',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.run),
  },
  {
    method: 'get',
    path: '/api/v1/production-runs/{id}/analytics/summary',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.run),
  },
  {
    method: 'get',
    path: '/api/v1/production-runs/{id}/analytics/delivery-performance',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.run),
  },
  {
    method: 'get',
    path: '/api/v1/production-runs/{id}/analytics/csv',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.run),
  },
  // trackers: admin and (scoped) user read and write; delete is admin-only
  { method: 'get', path: '/api/v1/trackers', allowed: READERS, status: 200 },
  {
    method: 'post',
    path: '/api/v1/trackers',
    allowed: READERS,
    status: 201,
    body: (fx, caller) => ({ name: `matrix-${caller}`, production_run_id: fx.run }),
  },
  { method: 'get', path: '/api/v1/trackers/status-counts', allowed: READERS, status: 200 },
  {
    method: 'post',
    path: '/api/v1/trackers/import-csv',
    allowed: READERS,
    status: 201,
    upload: (fx, caller) => ({
      bytes: Buffer.from(`name,production_run_id\nmatrix-import-${caller},${fx.run}\n`),
      filename: 'trackers.csv',
      contentType: 'text/csv',
    }),
  },
  { method: 'get', path: '/api/v1/trackers/{id}', allowed: READERS, status: 200, params: id((fx) => fx.tracker) },
  {
    method: 'put',
    path: '/api/v1/trackers/{id}',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.tracker),
    body: (_fx, caller) => ({ notes: `by ${caller}` }),
  },
  {
    method: 'delete',
    path: '/api/v1/trackers/{id}',
    allowed: ADMIN,
    status: 200,
    params: id((fx) => fx.spare.tracker),
  },
  {
    method: 'get',
    path: '/api/v1/trackers/{id}/status-history',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.tracker),
  },
  {
    method: 'get',
    path: '/api/v1/trackers/{id}/visits',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.tracker),
  },
  // maps
  { method: 'get', path: '/api/v1/trackers/{id}/track', allowed: READERS, status: 200, params: id((fx) => fx.tracker) },
  {
    method: 'get',
    path: '/api/v1/production-runs/{id}/positions',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.run),
  },
  // share links: created and listed by whoever sees the tracker; the public view and page need no token
  {
    method: 'post',
    path: '/api/v1/trackers/{id}/share-links',
    allowed: READERS,
    status: 201,
    params: id((fx) => fx.tracker),
    body: () => ({}),
  },
  {
    method: 'get',
    path: '/api/v1/trackers/{id}/share-links',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.tracker),
  },
  { method: 'delete', path: '/api/v1/share-links/{id}', allowed: READERS, status: 404, params: NO_WEBHOOK },
  { method: 'get', path: '/api/v1/public/track/{token}', allowed: 'public', status: 404, params: NO_TOKEN },
  { method: 'get', path: '/track/{token}', allowed: 'public', status: 404, params: NO_TOKEN },
  // back-dated, so the tracker's current state stays IN_STORAGE for the rows after it
  {
    method: 'post',
    path: '/api/v1/trackers/{id}/status',
    allowed: READERS,
    status: 201,
    params: id((fx) => fx.tracker),
    body: () => ({ status: 'IN_TRANSIT', timestamp: daysAgo(1.5) }),
  },
  // location reports: admin and ingest post, admin and user read history
  {
    method: 'post',
    path: '/api/v1/locations/reports',
    allowed: REPORTERS,
    status: 200,
    body: (fx) => ({ reports: [{ tracker_id: fx.tracker, ...reportOneHourAgo() }] }),
  },
  {
    method: 'post',
    path: '/api/v1/trackers/{id}/locations',
    allowed: REPORTERS,
    status: 200,
    params: id((fx) => fx.tracker),
    body: () => reportOneHourAgo(),
  },
  // device protocols: the tracker's device id, admin and ingest report
  {
    method: 'get',
    path: '/api/v1/ingest/osmand',
    allowed: REPORTERS,
    status: 200,
    query: `id=${MATRIX_DEVICE_ID}&lat=52.52&lon=13.405`,
  },
  {
    method: 'post',
    path: '/api/v1/ingest/osmand',
    allowed: REPORTERS,
    status: 200,
    query: `id=${MATRIX_DEVICE_ID}&lat=52.52&lon=13.405`,
  },
  {
    method: 'post',
    path: '/api/v1/ingest/owntracks',
    allowed: REPORTERS,
    status: 200,
    query: `d=${MATRIX_DEVICE_ID}`,
    body: () => ({ _type: 'location', lat: 52.52, lon: 13.405, tst: Math.floor(Date.now() / 1000) - 3600 }),
  },
  {
    method: 'get',
    path: '/api/v1/trackers/{id}/location-history',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.tracker),
  },
  // images: bytes are public (the unguessable name is the capability); delete is checked per image below
  {
    method: 'post',
    path: '/api/v1/images',
    allowed: READERS,
    status: 201,
    upload: () => ({ bytes: tinyPng(), filename: 'm.png', contentType: 'image/png' }),
  },
  { method: 'get', path: '/api/v1/images', allowed: READERS, status: 200 },
  {
    method: 'get',
    path: '/api/v1/images/{storage_name}.{extension}',
    allowed: 'public',
    status: 200,
    params: (fx) => {
      const [storage_name, extension] = fx.image.storage_filename.split('.');
      return { storage_name, extension };
    },
  },
  {
    method: 'get',
    path: '/api/v1/images/{image_id}',
    allowed: READERS,
    status: 200,
    params: (fx) => ({ image_id: fx.image.id }),
  },
  {
    method: 'delete',
    path: '/api/v1/images/{image_id}',
    allowed: READERS,
    status: 200,
    params: (fx, caller) => ({
      image_id: caller === 'admin' || caller === 'user' ? fx.deletableImage[caller] : fx.image.id,
    }),
  },
  // alerts: scoped like trackers (a missing one is 404 after authorization)
  { method: 'get', path: '/api/v1/alerts', allowed: READERS, status: 200 },
  { method: 'get', path: '/api/v1/alerts/{id}', allowed: READERS, status: 404, params: () => ({ id: 2_147_483_000 }) },
  {
    method: 'get',
    path: '/api/v1/trackers/{id}/alerts',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.tracker),
  },
  {
    method: 'get',
    path: '/api/v1/production-runs/{id}/alerts/summary',
    allowed: READERS,
    status: 200,
    params: id((fx) => fx.run),
  },
  // notifications: the caller's own (a missing one is 404 after authorization); the stream is
  // authorized before its query is validated, so an allowed caller's bad Last-Event-ID is 422
  { method: 'get', path: '/api/v1/notifications', allowed: READERS, status: 200 },
  { method: 'get', path: '/api/v1/notifications/unread-count', allowed: READERS, status: 200 },
  { method: 'post', path: '/api/v1/notifications/read-all', allowed: READERS, status: 200 },
  { method: 'post', path: '/api/v1/notifications/stream-ticket', allowed: READERS, status: 201 },
  { method: 'get', path: '/api/v1/notifications/stream', allowed: READERS, status: 422, query: 'last_event_id=x' },
  {
    method: 'post',
    path: '/api/v1/notifications/{notification_id}/read',
    allowed: READERS,
    status: 404,
    params: () => ({ notification_id: 2_147_483_000 }),
  },
  // API keys: managed by admins and users with their token (an ingest account gets its keys from an admin)
  {
    method: 'post',
    path: '/api/v1/api-keys',
    allowed: READERS,
    status: 201,
    body: () => ({ name: 'matrix', scopes: ['read'] }),
  },
  { method: 'get', path: '/api/v1/api-keys', allowed: READERS, status: 200 },
  {
    method: 'get',
    path: '/api/v1/api-keys/{id}',
    allowed: READERS,
    status: 404,
    params: () => ({ id: 2_147_483_000 }),
  },
  {
    method: 'delete',
    path: '/api/v1/api-keys/{id}',
    allowed: READERS,
    status: 404,
    params: () => ({ id: 2_147_483_000 }),
  },
  // webhooks: the caller's own (an unknown id is 404 after authorization)
  {
    method: 'post',
    path: '/api/v1/webhooks',
    allowed: READERS,
    status: 201,
    body: () => ({ url: 'http://127.0.0.1:9/matrix', event_types: ['tracker.status_changed'] }),
  },
  { method: 'get', path: '/api/v1/webhooks', allowed: READERS, status: 200 },
  { method: 'get', path: '/api/v1/webhooks/{id}', allowed: READERS, status: 404, params: NO_WEBHOOK },
  {
    method: 'patch',
    path: '/api/v1/webhooks/{id}',
    allowed: READERS,
    status: 404,
    params: NO_WEBHOOK,
    body: () => ({ is_active: true }),
  },
  { method: 'delete', path: '/api/v1/webhooks/{id}', allowed: READERS, status: 404, params: NO_WEBHOOK },
  { method: 'post', path: '/api/v1/webhooks/{id}/rotate-secret', allowed: READERS, status: 404, params: NO_WEBHOOK },
  { method: 'post', path: '/api/v1/webhooks/{id}/test', allowed: READERS, status: 404, params: NO_WEBHOOK },
  { method: 'get', path: '/api/v1/webhooks/{id}/deliveries', allowed: READERS, status: 404, params: NO_WEBHOOK },
  {
    method: 'post',
    path: '/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
    allowed: READERS,
    status: 404,
    params: () => ({ id: 2_147_483_000, delivery_id: 2_147_483_000 }),
  },
  // health: admin only, db-pool included
  { method: 'get', path: '/api/v1/health/basic', allowed: ADMIN, status: 200 },
  { method: 'get', path: '/api/v1/health/status', allowed: ADMIN, status: 200 },
  { method: 'get', path: '/api/v1/health/pipeline', allowed: ADMIN, status: 200 },
  { method: 'get', path: '/api/v1/health/system', allowed: ADMIN, status: 200 },
  { method: 'get', path: '/health/db-pool', allowed: ADMIN, status: 200 },
  // Prometheus scrape: outside the user roles (METRICS_TOKEN, unset here, is its own credential)
  { method: 'get', path: '/metrics', allowed: 'public', status: 200 },
];

/** Path prefixes whose every route must have a row — together, every documented route. */
const COVERED_PREFIXES = [
  '/api/v1/auth',
  '/api/v1/users',
  '/api/v1/clients',
  '/api/v1/brands',
  '/api/v1/production-runs',
  '/api/v1/storage-locations',
  '/api/v1/delivery-locations',
  '/api/v1/trackers',
  '/api/v1/locations',
  '/api/v1/ingest',
  '/api/v1/images',
  '/api/v1/notifications',
  '/api/v1/alerts',
  '/api/v1/webhooks',
  '/api/v1/health',
  '/api/v1/api-keys',
  '/api/v1/share-links',
  '/api/v1/public',
  '/track',
  '/health/db-pool',
  '/metrics',
];

const AUTH_FAILURES = ['Not authenticated', 'Could not validate credentials', 'Not enough permissions'];

describe('Role matrix', () => {
  let t: TestApp;
  let fx: MatrixFixtures;
  const callers = {} as Record<Role, CreatedUser>;

  beforeAll(async () => {
    t = await createTestApp();
    const client = await t.factories.client();
    callers.admin = await t.factories.admin();
    callers.user = await t.factories.user({ clients: [client.id] });
    callers.ingest = await t.factories.ingest();
    fx = await createMatrixFixtures(t, callers, client.id);
  });
  afterAll(() => t.close());

  const outcome = async (row: MatrixRow, caller: Caller, headers: Record<string, string>) => {
    const res = await sendRow(t, row, fx, caller, headers);
    // The body only matters when the status is wrong; a JSON detail says why.
    return {
      res,
      seen: { caller, status: res.status, detail: (res.body as { detail?: unknown } | undefined)?.detail },
    };
  };

  it.each(ROWS.map((row) => [rowName(row), row] as const))('%s', async (_name, row) => {
    if (row.allowed === 'public') {
      for (const headers of [{}, { Authorization: 'Bearer not-a-valid-token' }] as Record<string, string>[]) {
        const { res, seen } = await outcome(row, 'anonymous', headers);
        expect(seen.status).toBe(row.status);
        expect(AUTH_FAILURES).not.toContain(res.body?.detail);
      }
      return;
    }
    const anonymous = await sendRow(t, row, fx, 'anonymous', {});
    expect([anonymous.status, anonymous.body]).toEqual([401, { detail: 'Not authenticated' }]);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    const badToken = await sendRow(t, row, fx, 'anonymous', { Authorization: 'Bearer not-a-valid-token' });
    expect([badToken.status, badToken.body]).toEqual([401, { detail: 'Could not validate credentials' }]);
    expect(badToken.headers['www-authenticate']).toBe('Bearer');

    // Denied roles first: their 403 then meets a resource that exists (a DELETE row's target is
    // still there), and the allowed callers' success afterwards shows the refusal changed nothing.
    const allowed = row.allowed;
    const deniedFirst = [...ROLES].sort((a, b) => Number(allowed.includes(a)) - Number(allowed.includes(b)));
    for (const role of deniedFirst) {
      const { res, seen } = await outcome(row, role, callers[role].auth);
      if (row.allowed.includes(role)) {
        expect(seen).toEqual({ ...seen, status: row.status });
        expect(AUTH_FAILURES).not.toContain(res.body?.detail);
      } else {
        expect(seen).toEqual({ caller: role, status: 403, detail: 'Not enough permissions' });
      }
    }
  });

  it("a user may delete only an image they uploaded: someone else's answers 403 'Not enough permissions' and stays", async () => {
    const upload = await t
      .http()
      .post('/api/v1/images')
      .set(callers.admin.auth)
      .attach('file', tinyPng(), { filename: 'a.png', contentType: 'image/png' })
      .expect(201);
    const denied = await t.http().delete(`/api/v1/images/${upload.body.id}`).set(callers.user.auth);
    expect([denied.status, denied.body]).toEqual([403, { detail: 'Not enough permissions' }]);
    await t.http().get(`/api/v1/images/${upload.body.id}`).set(callers.user.auth).expect(200);
  });

  it('a refused write changes nothing: no row a denied role tried to create exists', async () => {
    // Runs after the table (declaration order): its creates name their rows after the caller, so only
    // allowed callers' names may exist.
    const [made] = await t.db.query<Record<string, string[] | null>[]>(
      `SELECT (SELECT array_agg(name ORDER BY name) FROM clients WHERE name LIKE 'matrix-client-%') AS clients,
              (SELECT array_agg(name ORDER BY name) FROM brands WHERE name LIKE 'matrix-brand-%') AS brands,
              (SELECT array_agg(description ORDER BY description) FROM production_runs WHERE description LIKE 'matrix-run-%') AS runs,
              (SELECT array_agg(name ORDER BY name) FROM storage_locations WHERE name LIKE 'matrix-storage-%') AS storage,
              (SELECT array_agg(name ORDER BY name) FROM delivery_locations WHERE name LIKE 'matrix-delivery-%') AS delivery,
              (SELECT array_agg(email ORDER BY email) FROM users WHERE email LIKE 'matrix-%') AS users,
              (SELECT array_agg(name ORDER BY name) FROM trackers WHERE name LIKE 'matrix-%') AS trackers`,
    );
    expect(made).toEqual({
      clients: ['matrix-client-admin', 'matrix-client-renamed'],
      brands: ['matrix-brand-admin', 'matrix-brand-renamed'],
      runs: ['matrix-run-admin'],
      storage: ['matrix-storage-admin'],
      delivery: ['matrix-delivery-admin'],
      users: ['matrix-admin@example.com'],
      trackers: ['matrix-admin', 'matrix-import-admin', 'matrix-import-user', 'matrix-user'],
    });
  });

  it('the API description is public, and documents bearer auth, 401 and 403 on every protected route', async () => {
    await t.http().get('/docs').expect(200);
    const doc = (await t.http().get('/openapi.json').expect(200)).body as {
      paths: Record<
        string,
        Record<string, { security?: Record<string, unknown>[]; responses: Record<string, unknown> }>
      >;
    };
    const undocumented = ROWS.filter((row) => row.allowed !== 'public').flatMap((row) => {
      const op = doc.paths[row.path]?.[row.method];
      const missing = [
        ...(op?.security?.some((requirement) => 'bearer' in requirement) ? [] : ['bearer']),
        ...['401', '403'].filter((status) => !op?.responses[status]),
      ];
      return missing.length ? [`${rowName(row)}: ${missing.join(', ')}`] : [];
    });
    expect(undocumented).toEqual([]);
  });

  it('has a row for every documented route, and no row for a route that does not exist', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documentedPaths = Object.keys(doc.paths);
    expect(documentedPaths.filter((path) => !underPrefix(path, COVERED_PREFIXES))).toEqual([]);
    const documented = Object.entries(doc.paths)
      .filter(([path]) => underPrefix(path, COVERED_PREFIXES))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const rows = ROWS.filter((row) => underPrefix(row.path, COVERED_PREFIXES))
      .map(rowName)
      .sort();
    expect(rows).toEqual(documented);
    expect(new Set(rows).size).toBe(rows.length);
    expect(ROWS.map(rowName).filter((r) => !documented.includes(r))).toEqual([]);
  });
});
