import { createTestApp, type TestApp } from '../support/app.js';
import { eventsOf } from '../support/notifications.js';
import { TRACKERS, trackerWorld, type TrackerWorld } from '../support/trackers.js';

/** Which writes record a status-change event, and what the event says. */
describe('notifications: status-change events', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => {
    t = await createTestApp();
    w = await trackerWorld(t);
  });
  afterAll(() => t.close());

  const create = async (body: Record<string, unknown> = {}) =>
    (await t.http().post(TRACKERS).set(w.admin.auth).send({ name: `TRK-${Math.random().toString(36).slice(2, 8)}`, production_run_id: w.runA.id, ...body }).expect(201)).body;

  it('a manual status entry that becomes current writes exactly one event, in the same transaction', async () => {
    const trk = await create();
    expect(await eventsOf(t, trk.id)).toEqual([]);
    const entry = (await t.http().post(`${TRACKERS}/${trk.id}/status`).set(w.userA.auth).send({ status: 'IN_TRANSIT' }).expect(201)).body;
    const events = await eventsOf(t, trk.id);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'tracker.status_changed',
        tracker_id: trk.id,
        tracker_name: trk.name,
        production_run_id: w.runA.id,
        client_id: w.clientA.id,
        from_status: 'CREATED',
        to_status: 'IN_TRANSIT',
        source: 'manual',
        status_entry_id: entry.id,
        storage_location_id: null,
        delivery_location_id: null,
      }),
    ]);
    expect((events[0].occurred_at as Date).toISOString()).toBe(entry.timestamp);
  });
});
