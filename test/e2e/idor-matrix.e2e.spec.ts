import { createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

/**
 * IDOR matrix: a user of client A against every route and resource of client B. Existence never
 * leaks (404, same as missing) unless the role alone decides (403).
 */
interface Ids {
  clientB: number;
  brandB: number;
  runA: number;
  runB: number;
  trackerA: number;
  trackerB: number;
  storage: number;
  delivery: number;
}

type Row = [
  method: 'get' | 'post' | 'put' | 'patch' | 'delete',
  path: (ids: Ids) => string,
  expected: number,
  body?: (ids: Ids) => object,
];

const rows: Row[] = [
  ['get', (i) => `/api/v1/clients/${i.clientB}`, 404],
  ['put', (i) => `/api/v1/clients/${i.clientB}`, 403, () => ({ name: 'x' })],
  ['delete', (i) => `/api/v1/clients/${i.clientB}`, 403],
  ['get', (i) => `/api/v1/brands/${i.brandB}`, 404],
  ['put', (i) => `/api/v1/brands/${i.brandB}`, 403, () => ({ name: 'x' })],
  ['delete', (i) => `/api/v1/brands/${i.brandB}`, 403],
  ['get', (i) => `/api/v1/production-runs/${i.runB}`, 404],
  ['put', (i) => `/api/v1/production-runs/${i.runB}`, 403, () => ({ description: 'x' })],
  ['delete', (i) => `/api/v1/production-runs/${i.runB}`, 403],
  ['get', (i) => `/api/v1/production-runs/${i.runB}/analytics`, 404],
  ['get', (i) => `/api/v1/production-runs/${i.runB}/analytics/summary`, 404],
  ['get', (i) => `/api/v1/production-runs/${i.runB}/analytics/delivery-performance`, 404],
  ['get', (i) => `/api/v1/production-runs/${i.runB}/analytics/csv`, 404],
  ['get', (i) => `/api/v1/trackers/${i.trackerB}`, 404],
  ['put', (i) => `/api/v1/trackers/${i.trackerB}`, 404, () => ({ notes: 'x' })],
  ['put', (i) => `/api/v1/trackers/${i.trackerA}`, 404, (i) => ({ production_run_id: i.runB })],
  ['delete', (i) => `/api/v1/trackers/${i.trackerB}`, 403],
  ['get', (i) => `/api/v1/trackers/${i.trackerB}/status-history`, 404],
  ['post', (i) => `/api/v1/trackers/${i.trackerB}/status`, 404, () => ({ status: 'IN_TRANSIT' })],
  ['get', (i) => `/api/v1/trackers/${i.trackerB}/location-history`, 404],
  [
    'post',
    (i) => `/api/v1/trackers/${i.trackerB}/locations`,
    403,
    () => ({ timestamp: new Date().toISOString(), latitude: 1, longitude: 1, confidence: 3 }),
  ],
  ['post', () => `/api/v1/trackers`, 404, (i) => ({ name: 'sneaky', production_run_id: i.runB })],
  ['get', () => `/api/v1/users/1`, 403],
  ['get', () => `/api/v1/users`, 403],
];

describe('IDOR matrix: user of client A against client B', () => {
  let t: TestApp;
  let ids: Ids;
  let userA: CreatedUser;

  beforeAll(async () => {
    t = await createTestApp();
    const clientA = await t.factories.client();
    const clientB = await t.factories.client();
    const brandB = await t.factories.brand(clientB.id);
    const runA = await t.factories.run({ clientId: clientA.id });
    const runB = await t.factories.run({ brandId: brandB.id });
    const storage = await t.factories.storageLocation();
    const delivery = await t.factories.deliveryLocation();
    const trackerA = await t.factories.tracker({ runId: runA.id, deliveryLocationId: delivery.id });
    const trackerB = await t.factories.tracker({
      runId: runB.id,
      deliveryLocationId: delivery.id,
      history: [{ status: 'IN_STORAGE', timestamp: '2026-01-02T00:00:00Z', storageLocationId: storage.id }],
    });
    ids = {
      clientB: clientB.id,
      brandB: brandB.id,
      runA: runA.id,
      runB: runB.id,
      trackerA: trackerA.id,
      trackerB: trackerB.id,
      storage: storage.id,
      delivery: delivery.id,
    };
    userA = await t.factories.user({ clients: [clientA.id] });
  });
  afterAll(() => t.close());

  it.each(rows.map((r) => [r[0].toUpperCase(), r[1].toString(), r] as const))(
    '%s %s',
    async (_m, _p, [method, path, expected, body]) => {
      let req = t.http()[method](path(ids)).set(userA.auth);
      if (body) req = req.send(body(ids));
      const res = await req;
      expect({ status: res.status, detail: typeof res.body.detail }).toEqual({ status: expected, detail: 'string' });
    },
  );

  it('answers a missing id exactly like an invisible one', async () => {
    const invisible = await t.http().get(`/api/v1/trackers/${ids.trackerB}`).set(userA.auth);
    const missing = await t.http().get('/api/v1/trackers/999999').set(userA.auth);
    expect(invisible.status).toBe(404);
    expect(invisible.body).toEqual(missing.body);
  });

  it('keeps client B out of every list', async () => {
    const lists = [
      `/api/v1/clients`,
      `/api/v1/brands?client_id=${ids.clientB}`,
      `/api/v1/production-runs?client_id=${ids.clientB}`,
      `/api/v1/trackers?production_run_id=${ids.runB}`,
      `/api/v1/trackers?id=${ids.trackerB}`,
      `/api/v1/storage-locations/${ids.storage}/trackers`,
      `/api/v1/delivery-locations/${ids.delivery}/trackers`,
    ];
    for (const url of lists) {
      const res = await t.http().get(url).set(userA.auth);
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      const found = (res.body.items as { id: number; client_id?: number; production_run_id?: number }[]).filter(
        (item) => item.id === ids.clientB || item.client_id === ids.clientB || item.production_run_id === ids.runB,
      );
      expect({ url, found }).toEqual({ url, found: [] });
    }
    const counts = await t
      .http()
      .get(`/api/v1/trackers/status-counts?production_run_id=${ids.runB}`)
      .set(userA.auth)
      .expect(200);
    expect(counts.body.total).toBe(0);
  });

  it('rejects a CSV import into client B run as an invalid row, writing nothing', async () => {
    const csv = Buffer.from(`name,production_run_id\nsneaky-import,${ids.runB}\n`);
    const res = await t
      .http()
      .post('/api/v1/trackers/import-csv')
      .set(userA.auth)
      .attach('file', csv, { filename: 'x.csv', contentType: 'text/csv' });
    expect(res.status).toBe(422);
    expect(res.body.imported).toBe(0);
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM trackers WHERE name = 'sneaky-import'`);
    expect(n).toBe(0);
  });
});
