import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

/** /storage-locations and /delivery-locations — shared reference data, same shape. */
describe.each([
  {
    path: 'storage-locations',
    table: 'storage_locations',
    resource: 'Storage location',
    column: 'storage_location_id',
  },
  {
    path: 'delivery-locations',
    table: 'delivery_locations',
    resource: 'Delivery location',
    column: 'delivery_location_id',
  },
])('Reference data: /$path', ({ path, table, resource, column }) => {
  let t: TestApp;
  let admin: CreatedUser;
  let user: CreatedUser;
  let ingest: CreatedUser;
  const url = `/api/v1/${path}`;

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin'));
    ingest = await t.factories.ingest();
    // A user with no clients still reads the shared locations.
    user = await t.factories.user({ clients: [] });
    await t.db.query(
      `INSERT INTO ${table} (name, address, latitude, longitude) VALUES ('Rotterdam Hub', 'Maasvlakte 1', 51.95, 4.05), ('Hamburg Depot', NULL, NULL, NULL)`,
    );
  });
  afterAll(() => t.close());

  it('creates a location (201) with all fields and stores it', async () => {
    const res = await t
      .http()
      .post(url)
      .set(admin.auth)
      .send({ name: ' Chicago Depot ', address: '200 W Lake St', latitude: 41.88, longitude: -87.63 })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Chicago Depot',
      address: '200 W Lake St',
      latitude: 41.88,
      longitude: -87.63,
      radius_m: 250,
      dwell_minutes: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const [row] = await t.db.query(`SELECT name, latitude FROM ${table} WHERE id = $1`, [res.body.id]);
    expect(row).toEqual({ name: 'Chicago Depot', latitude: 41.88 });

    const minimal = await t.http().post(url).set(admin.auth).send({ name: 'Nowhere' }).expect(201);
    expect(minimal.body).toMatchObject({ name: 'Nowhere', address: null, latitude: null, longitude: null });
  });

  it('rejects bad bodies with 422', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'X', latitude: 91 },
      { name: 'X', longitude: -180.5 },
      { name: 'X', latitude: '51' },
      { name: 'X', address: 7 },
      { name: 'X', other: true },
    ]) {
      const res = await t.http().post(url).set(admin.auth).send(body).expect(422);
      expect(res.body.detail).toMatch(/^Validation failed: /);
    }
  });

  it('lists every location to admins and users alike, with name filter and pagination', async () => {
    for (const caller of [admin, user]) {
      const res = await t.http().get(url).set(caller.auth).expect(200);
      expect(res.body).toMatchObject({ total: 4, page: 1, size: 50, pages: 1 });
    }
    const filtered = await t.http().get(`${url}?name=DEPOT`).set(user.auth).expect(200);
    expect(filtered.body.items.map((l: { name: string }) => l.name)).toEqual(['Hamburg Depot', 'Chicago Depot']);
    const paged = await t.http().get(`${url}?skip=2&limit=2`).set(user.auth).expect(200);
    expect(paged.body).toMatchObject({ total: 4, page: 2, size: 2, pages: 2 });
    expect(paged.body.items.map((l: { name: string }) => l.name)).toEqual(['Chicago Depot', 'Nowhere']);
    await t.http().get(`${url}?limit=5000`).set(user.auth).expect(422);
  });

  it('gets one location; missing → 404 with the resource detail; bad id → 422', async () => {
    const [first] = await t.db.query(`SELECT id FROM ${table} WHERE name = 'Rotterdam Hub'`);
    const res = await t.http().get(`${url}/${first.id}`).set(user.auth).expect(200);
    expect(res.body).toMatchObject({
      id: first.id,
      name: 'Rotterdam Hub',
      address: 'Maasvlakte 1',
      latitude: 51.95,
      longitude: 4.05,
    });
    expect((await t.http().get(`${url}/999999`).set(user.auth).expect(404)).body).toEqual({
      detail: `${resource} not found`,
    });
    await t.http().get(`${url}/x1`).set(user.auth).expect(422);
  });

  it('enforces roles: user cannot write, ingest cannot read', async () => {
    const [first] = await t.db.query(`SELECT id FROM ${table} ORDER BY id LIMIT 1`);
    await t.http().post(url).set(user.auth).send({ name: 'Nope' }).expect(403);
    await t.http().put(`${url}/${first.id}`).set(user.auth).send({ name: 'Nope' }).expect(403);
    await t.http().delete(`${url}/${first.id}`).set(user.auth).expect(403);
    await t.http().get(url).set(ingest.auth).expect(403);
    await t.http().get(`${url}/${first.id}`).set(ingest.auth).expect(403);
  });

  it('updates partially; null clears optional fields; a rename invalidates the analytics of runs that show it', async () => {
    const cache = t.app.get(CacheService);
    const created = await t
      .http()
      .post(url)
      .set(admin.auth)
      .send({ name: 'Old', address: 'Street 1', latitude: 1, longitude: 2 })
      .expect(201);
    const id = created.body.id;
    // Run A shows the place through a status entry of its tracker; run B does not reference it.
    const runA = await t.factories.run();
    const runB = await t.factories.run();
    const tracker = await t.factories.tracker({ runId: runA.id });
    await t.db.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp, ${column}) VALUES ($1, 'IN_TRANSIT', now(), $2)`,
      [tracker.id, id],
    );
    const areas = [`analytics:run:${runA.id}`, `analytics:run:${runB.id}`];
    const before = await cache.generations(areas);

    const res = await t.http().put(`${url}/${id}`).set(admin.auth).send({ name: 'New', latitude: null }).expect(200);
    expect(res.body).toMatchObject({ id, name: 'New', address: 'Street 1', latitude: null, longitude: 2 });
    const after = await cache.generations(areas);
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    const [row] = await t.db.query(`SELECT name, address, latitude, longitude FROM ${table} WHERE id = $1`, [id]);
    expect(row).toEqual({ name: 'New', address: 'Street 1', latitude: null, longitude: 2 });

    // Not a rename: nothing to invalidate.
    await t.http().put(`${url}/${id}`).set(admin.auth).send({ address: null }).expect(200);
    expect(await cache.generations(areas)).toEqual(after);

    await t.http().put(`${url}/${id}`).set(admin.auth).send({ name: null }).expect(422);
    await t.http().put(`${url}/${id}`).set(admin.auth).send({ longitude: 200 }).expect(422);
    expect((await t.http().put(`${url}/999999`).set(admin.auth).send({ name: 'X' }).expect(404)).body).toEqual({
      detail: `${resource} not found`,
    });
  });

  it('deletes an unused location (200 with it) and refuses one still referenced (409)', async () => {
    const unused = await t.http().post(url).set(admin.auth).send({ name: 'Temporary' }).expect(201);
    const res = await t.http().delete(`${url}/${unused.body.id}`).set(admin.auth).expect(200);
    expect(res.body).toMatchObject({ id: unused.body.id, name: 'Temporary' });
    expect(await t.db.query(`SELECT id FROM ${table} WHERE id = $1`, [unused.body.id])).toEqual([]);
    expect((await t.http().delete(`${url}/${unused.body.id}`).set(admin.auth).expect(404)).body).toEqual({
      detail: `${resource} not found`,
    });

    // Referenced by a tracker's current location / destination.
    const onTracker = await t.http().post(url).set(admin.auth).send({ name: 'Used by tracker' }).expect(201);
    const tracker = await t.factories.tracker();
    await t.db.query(`UPDATE trackers SET ${column} = $1 WHERE id = $2`, [onTracker.body.id, tracker.id]);
    const conflict = await t.http().delete(`${url}/${onTracker.body.id}`).set(admin.auth).expect(409);
    expect(conflict.body).toEqual({ detail: `${resource} is still referenced by trackers` });

    // Referenced only by a status history entry.
    const inHistory = await t.http().post(url).set(admin.auth).send({ name: 'Used by history' }).expect(201);
    await t.db.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp, ${column}) VALUES ($1, 'IN_TRANSIT', now(), $2)`,
      [tracker.id, inHistory.body.id],
    );
    const historyConflict = await t.http().delete(`${url}/${inHistory.body.id}`).set(admin.auth).expect(409);
    expect(historyConflict.body).toEqual({ detail: `${resource} is still referenced by tracker status history` });
    expect(
      await t.db.query(`SELECT id FROM ${table} WHERE id = ANY($1::int[])`, [[onTracker.body.id, inHistory.body.id]]),
    ).toHaveLength(2);
  });
});
