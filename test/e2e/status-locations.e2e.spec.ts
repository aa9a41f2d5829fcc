import type { TestApp } from '../support/app.js';
import { countRows, createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const STORAGE_ONLY = 'Validation failed: storage_location_id: is only allowed when status is IN_STORAGE';
const DELIVERY_ONLY = 'Validation failed: delivery_location_id: is only allowed when status is DELIVERED';

/**
 * One rule decides which locations a status entry carries (a storage location exactly for
 * IN_STORAGE, a delivery location exactly for DELIVERED), whether the entry comes from creating a
 * tracker, changing its status with PUT, or POST /trackers/{id}/status.
 */
describe('status entries carry only the locations of their status', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld({ env: { NODE_ENV: 'production' } })));
  afterAll(() => t.close());

  const current = async (id: number) =>
    (await t.db.query('SELECT status, storage_location_id, delivery_location_id FROM trackers WHERE id = $1', [id]))[0];

  it('POST /trackers/{id}/status refuses a storage location for any status but IN_STORAGE, as creation does', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA.id });
    for (const status of ['CREATED', 'IN_TRANSIT', 'DELIVERED']) {
      const entry = await t
        .http()
        .post(`${TRACKERS}/${tracker.id}/status`)
        .set(w.userA.auth)
        .send({ status, storage_location_id: w.storage.id, delivery_location_id: w.delivery.id });
      const created = await t
        .http()
        .post(TRACKERS)
        .set(w.userA.auth)
        .send({
          name: `mixed-${status}`,
          production_run_id: w.runA.id,
          status,
          storage_location_id: w.storage.id,
          delivery_location_id: w.delivery.id,
        });
      for (const res of [entry, created]) {
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          detail: STORAGE_ONLY,
          errors: [{ field: 'storage_location_id', message: 'is only allowed when status is IN_STORAGE' }],
        });
      }
    }
    expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(1);
    expect(await countRows(t.db, 'trackers', "name LIKE 'mixed-%'")).toBe(0);
    expect(await current(tracker.id)).toEqual({
      status: 'CREATED',
      storage_location_id: null,
      delivery_location_id: null,
    });
  });

  it('POST /trackers/{id}/status refuses a delivery location for any status but DELIVERED', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA.id });
    for (const body of [
      { status: 'IN_TRANSIT', delivery_location_id: w.delivery.id },
      { status: 'IN_STORAGE', storage_location_id: w.storage.id, delivery_location_id: w.delivery.id },
    ]) {
      const res = await t.http().post(`${TRACKERS}/${tracker.id}/status`).set(w.userA.auth).send(body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toBe(DELIVERY_ONLY);
    }
    expect(
      await countRows(t.db, 'tracker_status_history', 'tracker_id = $1 AND delivery_location_id IS NOT NULL', [
        tracker.id,
      ]),
    ).toBe(0);
    const stored = await t
      .http()
      .post(`${TRACKERS}/${tracker.id}/status`)
      .set(w.userA.auth)
      .send({ status: 'IN_STORAGE', storage_location_id: w.storage.id });
    expect(stored.status).toBe(201);
    expect(stored.body).toMatchObject({
      status: 'IN_STORAGE',
      storage_location_id: w.storage.id,
      delivery_location_id: null,
    });
    const delivered = await t
      .http()
      .post(`${TRACKERS}/${tracker.id}/status`)
      .set(w.userA.auth)
      .send({ status: 'DELIVERED', delivery_location_id: w.delivery2.id });
    expect(delivered.status).toBe(201);
    expect(delivered.body).toMatchObject({
      status: 'DELIVERED',
      storage_location_id: null,
      delivery_location_id: w.delivery2.id,
    });
  });

  it('PUT /trackers/{id} refuses a storage location with a change to any status but IN_STORAGE', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA.id });
    const res = await t
      .http()
      .put(`${TRACKERS}/${tracker.id}`)
      .set(w.userA.auth)
      .send({ status: 'IN_TRANSIT', storage_location_id: w.storage.id });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe(STORAGE_ONLY);
    expect(await current(tracker.id)).toEqual({
      status: 'CREATED',
      storage_location_id: null,
      delivery_location_id: null,
    });
    // On PUT, delivery_location_id is the destination, so it may come with any status.
    const moved = await t
      .http()
      .put(`${TRACKERS}/${tracker.id}`)
      .set(w.userA.auth)
      .send({ status: 'IN_TRANSIT', delivery_location_id: w.delivery.id });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      status: 'IN_TRANSIT',
      storage_location_id: null,
      delivery_location_id: w.delivery.id,
    });
    const [entry] = await t.db.query(
      'SELECT delivery_location_id FROM tracker_status_history WHERE tracker_id = $1 AND status = $2',
      [tracker.id, 'IN_TRANSIT'],
    );
    expect(entry.delivery_location_id).toBeNull();
  });
});
