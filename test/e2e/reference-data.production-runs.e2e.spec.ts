import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

/** /production-runs CRUD (the analytics routes are tested elsewhere). */
describe('Reference data: production runs', () => {
  let t: TestApp;
  let cache: CacheService;
  let admin: CreatedUser;
  let ingest: CreatedUser;
  let userA: CreatedUser;
  let clientA: { id: number };
  let clientB: { id: number };
  let brandA: { id: number };
  let brandA2: { id: number };
  let brandB: { id: number };
  let runA: { id: number };
  let runB: { id: number };

  const generation = async (area: string) => (await cache.generations([area]))[0];

  beforeAll(async () => {
    t = await createTestApp();
    cache = t.app.get(CacheService);
    admin = await t.factories.admin();
    ingest = await t.factories.ingest();
    clientA = await t.factories.client();
    clientB = await t.factories.client();
    userA = await t.factories.user({ clients: [clientA.id] });
    brandA = await t.factories.brand(clientA.id);
    brandA2 = await t.factories.brand(clientA.id);
    brandB = await t.factories.brand(clientB.id);
    runA = await t.factories.run({
      brandId: brandA.id,
      description: 'Run A',
      startDate: '2026-01-01T00:00:00Z',
      endDate: '2026-02-01T00:00:00Z',
    });
    runB = await t.factories.run({ brandId: brandB.id, description: 'Run B' });
    // Three trackers in run A, one in run B, inserted set-based.
    await t.db.query(
      `INSERT INTO trackers (name, production_run_id) SELECT 'T' || n, $1::int FROM generate_series(1, 3) n
       UNION ALL SELECT 'T1', $2::int`,
      [runA.id, runB.id],
    );
  });
  afterAll(() => t.close());

  it('creates a run (201): client_id follows the brand, tracker_count 0, dates stored in UTC', async () => {
    const res = await t
      .http()
      .post('/api/v1/production-runs')
      .set(admin.auth)
      .send({
        description: ' Spring batch ',
        brand_id: brandA.id,
        start_date: '2026-03-01T10:00:00',
        end_date: '2026-03-02T10:00:00+02:00',
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      description: 'Spring batch',
      brand_id: brandA.id,
      client_id: clientA.id,
      start_date: '2026-03-01T10:00:00.000Z',
      end_date: '2026-03-02T08:00:00.000Z',
      alert_silent_hours: null,
      tracker_count: 0,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const [row] = await t.db.query('SELECT client_id, description FROM production_runs WHERE id = $1', [res.body.id]);
    expect(row).toEqual({ client_id: clientA.id, description: 'Spring batch' });
  });

  it('takes alert_silent_hours 1..720 on create and update (null: the default); anything else is 422', async () => {
    const runs = '/api/v1/production-runs';
    const created = await t.http().post(runs).set(admin.auth).send({ brand_id: brandA.id, alert_silent_hours: 1 });
    expect([created.status, created.body.alert_silent_hours]).toEqual([201, 1]);
    const id = created.body.id as number;
    const updated = await t.http().put(`${runs}/${id}`).set(admin.auth).send({ alert_silent_hours: 720 }).expect(200);
    expect(updated.body.alert_silent_hours).toBe(720);
    await t.http().put(`${runs}/${id}`).set(admin.auth).send({ description: 'kept' }).expect(200);
    expect((await t.http().get(`${runs}/${id}`).set(admin.auth).expect(200)).body.alert_silent_hours).toBe(720);
    const cleared = await t.http().put(`${runs}/${id}`).set(admin.auth).send({ alert_silent_hours: null }).expect(200);
    expect(cleared.body.alert_silent_hours).toBeNull();
    for (const bad of [0, 721, 1.5, '24', true]) {
      for (const res of [
        await t.http().post(runs).set(admin.auth).send({ brand_id: brandA.id, alert_silent_hours: bad }),
        await t.http().put(`${runs}/${id}`).set(admin.auth).send({ alert_silent_hours: bad }),
      ]) {
        expect(res.status).toBe(422);
        expect(new Set(res.body.errors.map((e: { field: string }) => e.field))).toEqual(
          new Set(['alert_silent_hours']),
        );
      }
    }
    const [row] = await t.db.query('SELECT alert_silent_hours FROM production_runs WHERE id = $1', [id]);
    expect(row).toEqual({ alert_silent_hours: null });
    await t.http().delete(`${runs}/${id}`).set(admin.auth).expect(200); // the list test counts the runs
  });

  it('creates a run with only a brand (description "", no dates)', async () => {
    const res = await t
      .http()
      .post('/api/v1/production-runs')
      .set(admin.auth)
      .send({ brand_id: brandB.id })
      .expect(201);
    expect(res.body).toMatchObject({ description: '', client_id: clientB.id, start_date: null, end_date: null });
  });

  it('rejects end_date before start_date, an unknown brand and bad bodies with 422', async () => {
    const order = await t
      .http()
      .post('/api/v1/production-runs')
      .set(admin.auth)
      .send({ brand_id: brandA.id, start_date: '2026-03-02', end_date: '2026-03-01' })
      .expect(422);
    expect(order.body).toEqual({
      detail: 'Validation failed: end_date: must not be before start_date',
      errors: [{ field: 'end_date', message: 'must not be before start_date' }],
    });
    const brand = await t.http().post('/api/v1/production-runs').set(admin.auth).send({ brand_id: 999999 }).expect(422);
    expect(brand.body.detail).toBe('Validation failed: brand_id: brand does not exist');
    for (const body of [
      {},
      { brand_id: 'x' },
      { brand_id: brandA.id, start_date: 'yesterday' },
      { brand_id: brandA.id, start_date: '2026-13-01T00:00:00Z' },
      { brand_id: brandA.id, description: 5 },
      { brand_id: brandA.id, client_id: clientB.id },
    ]) {
      const res = await t.http().post('/api/v1/production-runs').set(admin.auth).send(body).expect(422);
      expect(res.body.detail).toMatch(/^Validation failed: /);
    }
  });

  it('gets a run with its tracker_count', async () => {
    const res = await t.http().get(`/api/v1/production-runs/${runA.id}`).set(admin.auth).expect(200);
    expect(res.body).toMatchObject({
      id: runA.id,
      description: 'Run A',
      brand_id: brandA.id,
      client_id: clientA.id,
      start_date: '2026-01-01T00:00:00.000Z',
      end_date: '2026-02-01T00:00:00.000Z',
      tracker_count: 3,
    });
  });

  it('lists runs with brand_id / client_id filters, tracker counts and pagination', async () => {
    const all = await t.http().get('/api/v1/production-runs').set(admin.auth).expect(200);
    expect(all.body.total).toBe(4);
    const counts = Object.fromEntries(
      all.body.items.map((r: { id: number; tracker_count: number }) => [r.id, r.tracker_count]),
    );
    expect(counts[runA.id]).toBe(3);
    expect(counts[runB.id]).toBe(1);

    const byBrand = await t.http().get(`/api/v1/production-runs?brand_id=${brandB.id}`).set(admin.auth).expect(200);
    expect(byBrand.body.items.every((r: { brand_id: number }) => r.brand_id === brandB.id)).toBe(true);
    expect(byBrand.body.total).toBe(2);

    const byClient = await t.http().get(`/api/v1/production-runs?client_id=${clientA.id}`).set(admin.auth).expect(200);
    expect(byClient.body.items.map((r: { client_id: number }) => r.client_id)).toEqual([clientA.id, clientA.id]);

    const none = await t
      .http()
      .get(`/api/v1/production-runs?client_id=${clientA.id}&brand_id=${brandB.id}`)
      .set(admin.auth)
      .expect(200);
    expect(none.body).toEqual({ items: [], total: 0, page: 1, size: 50, pages: 0 });

    const paged = await t.http().get('/api/v1/production-runs?skip=3&limit=3').set(admin.auth).expect(200);
    expect(paged.body).toMatchObject({ total: 4, page: 2, size: 3, pages: 2 });
    expect(paged.body.items).toHaveLength(1);

    await t.http().get('/api/v1/production-runs?brand_id=-3').set(admin.auth).expect(422);
    await t.http().get('/api/v1/production-runs?client_id=x').set(admin.auth).expect(422);
  });

  it("scopes runs to the user's clients; invisible answers like missing", async () => {
    const list = await t.http().get('/api/v1/production-runs').set(userA.auth).expect(200);
    expect(list.body.items.every((r: { client_id: number }) => r.client_id === clientA.id)).toBe(true);
    expect(list.body.items.map((r: { id: number }) => r.id)).toContain(runA.id);
    expect(list.body.items.map((r: { id: number }) => r.id)).not.toContain(runB.id);
    const other = await t.http().get(`/api/v1/production-runs?client_id=${clientB.id}`).set(userA.auth).expect(200);
    expect(other.body.total).toBe(0);

    const hidden = await t.http().get(`/api/v1/production-runs/${runB.id}`).set(userA.auth).expect(404);
    expect(hidden.body).toEqual({ detail: 'Production run not found' });
    const missing = await t.http().get('/api/v1/production-runs/999999').set(userA.auth).expect(404);
    expect(missing.body).toEqual({ detail: 'Production run not found' });
  });

  it('enforces roles and validates ids', async () => {
    await t.http().post('/api/v1/production-runs').set(userA.auth).send({ brand_id: brandA.id }).expect(403);
    await t.http().put(`/api/v1/production-runs/${runA.id}`).set(userA.auth).send({ description: 'x' }).expect(403);
    await t.http().delete(`/api/v1/production-runs/${runA.id}`).set(userA.auth).expect(403);
    await t.http().get('/api/v1/production-runs').set(ingest.auth).expect(403);
    await t.http().get(`/api/v1/production-runs/${runA.id}`).set(ingest.auth).expect(403);
    await t.http().get('/api/v1/production-runs/0').set(admin.auth).expect(422);
    await t.http().put('/api/v1/production-runs/abc').set(admin.auth).send({}).expect(422);
  });

  it('updates fields partially, checks dates against the stored ones, and invalidates its analytics', async () => {
    const run = await t.factories.run({ brandId: brandA.id, description: 'Before', startDate: '2026-05-01T00:00:00Z' });
    const before = await generation(`analytics:run:${run.id}`);
    const res = await t
      .http()
      .put(`/api/v1/production-runs/${run.id}`)
      .set(admin.auth)
      .send({ description: 'After' })
      .expect(200);
    expect(res.body).toMatchObject({
      id: run.id,
      description: 'After',
      start_date: '2026-05-01T00:00:00.000Z',
      end_date: null,
      tracker_count: 0,
    });
    expect(await generation(`analytics:run:${run.id}`)).not.toBe(before);

    const early = await t
      .http()
      .put(`/api/v1/production-runs/${run.id}`)
      .set(admin.auth)
      .send({ end_date: '2026-04-30T23:59:59Z' })
      .expect(422);
    expect(early.body.errors).toEqual([{ field: 'end_date', message: 'must not be before start_date' }]);

    const ended = await t
      .http()
      .put(`/api/v1/production-runs/${run.id}`)
      .set(admin.auth)
      .send({ end_date: '2026-06-01T00:00:00Z' })
      .expect(200);
    expect(ended.body.end_date).toBe('2026-06-01T00:00:00.000Z');
    // Clearing the start date lifts the ordering rule; null clears.
    const cleared = await t
      .http()
      .put(`/api/v1/production-runs/${run.id}`)
      .set(admin.auth)
      .send({ start_date: null })
      .expect(200);
    expect(cleared.body).toMatchObject({ start_date: null, end_date: '2026-06-01T00:00:00.000Z' });
    const [row] = await t.db.query('SELECT description, start_date, end_date FROM production_runs WHERE id = $1', [
      run.id,
    ]);
    expect(row).toEqual({ description: 'After', start_date: null, end_date: new Date('2026-06-01T00:00:00Z') });

    await t.http().put(`/api/v1/production-runs/${run.id}`).set(admin.auth).send({ description: null }).expect(422);
    await t.http().put(`/api/v1/production-runs/${run.id}`).set(admin.auth).send({ client_id: clientB.id }).expect(422);
    await t.http().put(`/api/v1/production-runs/${run.id}`).set(admin.auth).send({ brand_id: 999999 }).expect(422);
    const missing = await t
      .http()
      .put('/api/v1/production-runs/999999')
      .set(admin.auth)
      .send({ description: 'x' })
      .expect(404);
    expect(missing.body).toEqual({ detail: 'Production run not found' });
  });

  it('moves a run to another brand: client_id follows, tracker lists are invalidated, scope changes', async () => {
    const run = await t.factories.run({ brandId: brandA.id });
    await t.http().put(`/api/v1/production-runs/${run.id}`).set(admin.auth).send({ brand_id: brandA2.id }).expect(200);
    const trackersBefore = await generation('trackers');
    const res = await t
      .http()
      .put(`/api/v1/production-runs/${run.id}`)
      .set(admin.auth)
      .send({ brand_id: brandB.id })
      .expect(200);
    expect(res.body).toMatchObject({ brand_id: brandB.id, client_id: clientB.id });
    expect(await generation('trackers')).not.toBe(trackersBefore);
    await t.http().get(`/api/v1/production-runs/${run.id}`).set(userA.auth).expect(404);
  });

  it('deletes an empty run (200 with it) and refuses one with trackers (409)', async () => {
    const run = await t.factories.run({ brandId: brandA.id, description: 'Doomed' });
    const before = await generation(`analytics:run:${run.id}`);
    const res = await t.http().delete(`/api/v1/production-runs/${run.id}`).set(admin.auth).expect(200);
    expect(res.body).toMatchObject({ id: run.id, description: 'Doomed', tracker_count: 0, client_id: clientA.id });
    expect(await t.db.query('SELECT id FROM production_runs WHERE id = $1', [run.id])).toEqual([]);
    expect(await generation(`analytics:run:${run.id}`)).not.toBe(before);
    await t.http().delete(`/api/v1/production-runs/${run.id}`).set(admin.auth).expect(404);

    const conflict = await t.http().delete(`/api/v1/production-runs/${runA.id}`).set(admin.auth).expect(409);
    expect(conflict.body).toEqual({ detail: 'Production run is still referenced by trackers' });
    expect(await t.db.query('SELECT id FROM production_runs WHERE id = $1', [runA.id])).toHaveLength(1);
  });
});
