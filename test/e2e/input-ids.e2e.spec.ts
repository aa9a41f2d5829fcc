import type { TestApp } from '../support/app.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Ids are positive integers written in plain digits that fit PostgreSQL's `integer`
 * (1..2147483647), in the path, in the query and in JSON bodies; anything else is a 422 naming
 * the field, never a 5xx and never a silently converted id.
 */
const BAD_TEXT_IDS = [
  '0x10',
  '1e3',
  '1.0',
  '%2B1',
  '+1',
  '%201',
  '1%20',
  '%091',
  '01',
  '-1',
  '0',
  '2147483648',
  '99999999999',
  'abc',
  '%D9%A1',
];
const ID_MESSAGE = 'must be a positive integer';

describe('Strict ids', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let tracker: { id: number };

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
    // Enough trackers that a converted id (0x10 → 16, 1e3 → 1000 is absent, 1.0 → 1) would exist.
    for (let i = 0; i < 16; i++) tracker = await t.factories.tracker({ runId: w.runA.id });
  });
  afterAll(() => t.close());

  const expect422 = (res: { status: number; body: unknown }, field: string, message = ID_MESSAGE) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 422,
      body: { detail: `Validation failed: ${field}: ${message}`, errors: [{ field, message }] },
    });
  };

  describe('path ids', () => {
    const getPaths = (id: string) => [
      `${TRACKERS}/${id}`,
      `${TRACKERS}/${id}/status-history`,
      `${TRACKERS}/${id}/location-history`,
      `/api/v1/clients/${id}`,
      `/api/v1/brands/${id}`,
      `/api/v1/production-runs/${id}`,
      `/api/v1/production-runs/${id}/analytics/summary`,
      `/api/v1/storage-locations/${id}`,
      `/api/v1/storage-locations/${id}/trackers`,
      `/api/v1/delivery-locations/${id}`,
      `/api/v1/delivery-locations/${id}/trackers`,
      `/api/v1/users/${id}`,
    ];

    it.each(BAD_TEXT_IDS)('GET with id %j → 422 on every route', async (id) => {
      for (const path of getPaths(id)) {
        const res = await t.http().get(path).set(w.admin.auth);
        expect({ path, status: res.status }).toEqual({ path, status: 422 });
        expect422(res, 'id');
      }
    });

    it('writes with a converted id are refused and change nothing', async () => {
      const hex = `0x${tracker.id.toString(16)}`;
      const put = await t.http().put(`${TRACKERS}/${hex}`).set(w.admin.auth).send({ notes: 'via hex' });
      expect422(put, 'id');
      const status = await t
        .http()
        .post(`${TRACKERS}/${tracker.id}.0/status`)
        .set(w.admin.auth)
        .send({ status: 'IN_TRANSIT' });
      expect422(status, 'id');
      const del = await t.http().delete(`${TRACKERS}/${tracker.id}e0`).set(w.admin.auth);
      expect422(del, 'id');
      const ingest = await t
        .http()
        .post(`${TRACKERS}/0${tracker.id}/locations`)
        .set(w.ingest.auth)
        .send({ reports: [] });
      expect422(ingest, 'id');
      const [row] = await t.db.query('SELECT notes, status FROM trackers WHERE id = $1', [tracker.id]);
      expect(row).toEqual({ notes: null, status: 'CREATED' });
    });

    it('an all-digit image reference is an image id and is just as strict', async () => {
      for (const id of ['01', '0', '2147483648'])
        expect422(await t.http().get(`/api/v1/images/${id}`).set(w.admin.auth), 'image_id');
    });

    it('the largest int4 id is an ordinary missing id (404)', async () => {
      const res = await t.http().get(`${TRACKERS}/2147483647`).set(w.admin.auth);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Tracker not found' });
    });
  });

  describe('query ids', () => {
    const queries = [
      [TRACKERS, 'production_run_id'],
      [`${TRACKERS}/status-counts`, 'production_run_id'],
      ['/api/v1/brands', 'client_id'],
      ['/api/v1/production-runs', 'brand_id'],
      ['/api/v1/production-runs', 'client_id'],
    ] as const;

    it.each(BAD_TEXT_IDS)('%j → 422 naming the parameter', async (id) => {
      for (const [path, field] of queries) {
        const res = await t.http().get(`${path}?${field}=${id}`).set(w.admin.auth);
        expect({ path, field, status: res.status }).toEqual({ path, field, status: 422 });
        expect422(res, field);
      }
    });

    it('a repeated id parameter is refused rather than half-read', async () => {
      expect422(
        await t
          .http()
          .get(`${TRACKERS}?production_run_id=${w.runA.id}&production_run_id=${w.runA2.id}`)
          .set(w.admin.auth),
        'production_run_id',
      );
    });

    it('a plain id still filters', async () => {
      const res = await t.http().get(`${TRACKERS}?production_run_id=${w.runA.id}&limit=1`).set(w.admin.auth);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(16);
    });

    it('the id list of GET /trackers takes only int4 ids (2147483648 is a 422, not a database error)', async () => {
      const message = 'must be a positive integer or a comma list of them';
      for (const list of [
        '2147483648',
        `${tracker.id},2147483648`,
        '99999999999',
        '0x10',
        '1.0',
        '01',
        `${tracker.id},,x`,
        '%201',
        `${tracker.id},%202`,
        `${tracker.id},`,
      ]) {
        expect422(await t.http().get(`${TRACKERS}?id=${list}`).set(w.admin.auth), 'id', message);
      }
      const ok = await t.http().get(`${TRACKERS}?id=${tracker.id},2147483647`).set(w.admin.auth);
      expect(ok.status).toBe(200);
      expect(ok.body.items.map((i: { id: number }) => i.id)).toEqual([tracker.id]);
    });
  });

  describe('skip and limit', () => {
    it.each([
      ['skip=1e3', 'skip'],
      ['skip=0x10', 'skip'],
      ['skip=1.0', 'skip'],
      ['skip=%201', 'skip'],
      ['skip=2147483648', 'skip'],
      ['limit=1e1', 'limit'],
      ['limit=0x10', 'limit'],
      ['limit=%2B5', 'limit'],
      ['limit=05', 'limit'],
    ])('%s → 422', async (query, field) => {
      for (const path of [TRACKERS, '/api/v1/clients', `${TRACKERS}/${tracker.id}/location-history`]) {
        const res = await t.http().get(`${path}?${query}`).set(w.admin.auth);
        expect({ path, status: res.status }).toEqual({ path, status: 422 });
        expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
      }
    });

    it('plain digits page as before', async () => {
      const res = await t.http().get(`${TRACKERS}?skip=0&limit=5`).set(w.admin.auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, size: 5 });
    });
  });

  describe('body ids', () => {
    it.each([1.5, '1', 0, -1, 2147483648, true, [1]])('production_run_id %j → 422', async (value) => {
      expect422(
        await t.http().post(TRACKERS).set(w.admin.auth).send({ name: 'body-id', production_run_id: value }),
        'production_run_id',
      );
    });

    it('ids in other bodies use the same rule and message', async () => {
      expect422(
        await t.http().post('/api/v1/brands').set(w.admin.auth).send({ name: 'b', client_id: 2147483648 }),
        'client_id',
      );
      expect422(await t.http().post('/api/v1/production-runs').set(w.admin.auth).send({ brand_id: 1.5 }), 'brand_id');
      const status = await t
        .http()
        .post(`${TRACKERS}/${tracker.id}/status`)
        .set(w.admin.auth)
        .send({ status: 'IN_STORAGE', storage_location_id: '1' });
      expect422(status, 'storage_location_id');
      for (const list of [[1.5], [0], ['1'], [2147483648]]) {
        const user = await t
          .http()
          .post('/api/v1/users')
          .set(w.admin.auth)
          .send({ name: 'n', email: 'ids@example.com', password: 'long-enough-1', client_list: list });
        expect422(user, 'client_list');
      }
    });
  });
});
