import type { TestApp } from '../support/app.js';
import {
  at,
  createGeofenceWorld,
  FAR,
  IN_D,
  ORIGIN,
  sendTimeline,
  settled,
  type TimelinePoint,
} from '../support/geofences.js';
import { eventsOf, transitions } from '../support/notifications.js';
import { TRACKERS, uploadCsv, type TrackerWorld } from '../support/trackers.js';

/**
 * Which writes record a status-change event and what it says: one per change of a tracker's
 * current (status, storage location, destination), in order, whichever path made the change.
 * Storage S: radius 500 m, dwell 30 min, at the origin. Delivery D: radius 200 m, dwell 0, 20 km north.
 */
describe('notifications: status-change events', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number };
  let D: { id: number };

  beforeAll(async () => ({ t, w, S, D } = await createGeofenceWorld()));
  afterAll(() => t.close());

  const name = () => `TRK-${Math.random().toString(36).slice(2, 8)}`;
  const create = async (body: Record<string, unknown> = {}) =>
    (
      await t
        .http()
        .post(TRACKERS)
        .set(w.admin.auth)
        .send({ name: name(), production_run_id: w.runA.id, ...body })
        .expect(201)
    ).body;
  const manual = async (trackerId: number, body: object) =>
    (await t.http().post(`${TRACKERS}/${trackerId}/status`).set(w.userA.auth).send(body).expect(201)).body;
  const send = async (trackerId: number, points: TimelinePoint[]) => {
    await sendTimeline(t, w.ingest, trackerId, points);
    await settled(t);
  };
  const automated = () => t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });

  it('a manual status entry that becomes current writes exactly one event', async () => {
    const trk = await create();
    expect(await eventsOf(t, trk.id)).toEqual([]);
    const entry = await manual(trk.id, { status: 'IN_TRANSIT' });
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

  it('IN_STORAGE and DELIVERED carry their locations; a DELIVERED entry gives a tracker without destination its location', async () => {
    const trk = await create();
    await manual(trk.id, { status: 'IN_STORAGE', storage_location_id: w.storage.id });
    await manual(trk.id, { status: 'IN_STORAGE', storage_location_id: w.storage2.id });
    await manual(trk.id, { status: 'DELIVERED', delivery_location_id: w.delivery.id });
    const events = await eventsOf(t, trk.id);
    expect(events.map((e) => [e.from_status, e.to_status, e.storage_location_id, e.delivery_location_id])).toEqual([
      ['CREATED', 'IN_STORAGE', w.storage.id, null],
      ['IN_STORAGE', 'IN_STORAGE', w.storage2.id, null],
      ['IN_STORAGE', 'DELIVERED', null, w.delivery.id],
    ]);
  });

  it('none for a back-dated entry that does not become current, IN_TRANSIT on IN_TRANSIT, creation or a CSV import', async () => {
    const trk = await create({ status: 'IN_TRANSIT' });
    expect(await eventsOf(t, trk.id)).toEqual([]);
    await manual(trk.id, { status: 'IN_TRANSIT' });
    await manual(trk.id, {
      status: 'IN_STORAGE',
      storage_location_id: w.storage.id,
      timestamp: '2020-01-01T00:00:00Z',
    });
    expect(await eventsOf(t, trk.id)).toEqual([]);

    const csv = `name,production_run_id,status\nCSV-${name()},${w.runA.id},IN_TRANSIT\nCSV-${name()},${w.runA.id},CREATED\n`;
    expect((await uploadCsv(t, w.admin.auth, csv)).status).toBe(201);
    const [{ n }] = await t.db.query(
      `SELECT count(*)::int AS n FROM notification_events e JOIN trackers tr ON tr.id = e.tracker_id WHERE tr.name LIKE 'CSV-%'`,
    );
    expect(n).toBe(0);
  });

  it('PUT: a new status is one event (with a new destination folded in); a destination alone is a change of the triple; a name is none', async () => {
    const trk = await create({ status: 'IN_TRANSIT' });
    await t.http().put(`${TRACKERS}/${trk.id}`).set(w.admin.auth).send({ name: name(), notes: 'n' }).expect(200);
    expect(await eventsOf(t, trk.id)).toEqual([]);
    await t
      .http()
      .put(`${TRACKERS}/${trk.id}`)
      .set(w.admin.auth)
      .send({ delivery_location_id: w.delivery.id })
      .expect(200);
    await t
      .http()
      .put(`${TRACKERS}/${trk.id}`)
      .set(w.admin.auth)
      .send({ status: 'DELIVERED', delivery_location_id: w.delivery2.id })
      .expect(200);
    const events = await eventsOf(t, trk.id);
    expect(events.map((e) => [e.from_status, e.to_status, e.source, e.delivery_location_id])).toEqual([
      ['IN_TRANSIT', 'IN_TRANSIT', 'manual', w.delivery.id],
      ['IN_TRANSIT', 'DELIVERED', 'manual', w.delivery2.id],
    ]);
  });

  it('events stay after their tracker is deleted; the delete itself makes none', async () => {
    const trk = await create();
    await manual(trk.id, { status: 'IN_TRANSIT' });
    await t.http().delete(`${TRACKERS}/${trk.id}`).set(w.admin.auth).expect(200);
    expect(await transitions(t, trk.id)).toEqual(['CREATED>IN_TRANSIT']);
    const inbox = await t.http().get('/api/v1/notifications').set(w.userA.auth).expect(200);
    expect(inbox.body.items.some((n: { event: { tracker_id: number } }) => n.event.tracker_id === trk.id)).toBe(true);
  });

  it('automation: one event per entry that became current, in order, even when one replay writes several', async () => {
    const trk = await automated();
    await send(trk.id, [
      [1, FAR],
      [10, ORIGIN],
      [45, ORIGIN],
      [60, FAR],
      [70, IN_D],
    ]);
    const events = await eventsOf(t, trk.id);
    expect(
      events.map((e) => [
        e.from_status,
        e.to_status,
        e.source,
        (e.occurred_at as Date).toISOString(),
        e.storage_location_id,
        e.delivery_location_id,
      ]),
    ).toEqual([
      ['CREATED', 'IN_TRANSIT', 'geofence', at(1), null, null],
      ['IN_TRANSIT', 'IN_STORAGE', 'geofence', at(10), S.id, null],
      ['IN_STORAGE', 'IN_TRANSIT', 'geofence', at(60), null, null],
      ['IN_TRANSIT', 'DELIVERED', 'geofence', at(70), null, D.id],
    ]);
    const entries = await t.db.query(
      `SELECT id::int FROM tracker_status_history WHERE tracker_id = $1 AND source = 'geofence' ORDER BY timestamp, id`,
      [trk.id],
    );
    expect(events.map((e) => e.status_entry_id)).toEqual(entries.map((e: { id: number }) => e.id));

    // The same reports one batch at a time record the same changes.
    const other = await automated();
    for (const point of [
      [1, FAR],
      [10, ORIGIN],
      [45, ORIGIN],
      [60, FAR],
      [70, IN_D],
    ] as [number, { latitude: number; longitude: number }][])
      await send(other.id, [point]);
    expect(await transitions(t, other.id)).toEqual(await transitions(t, trk.id));
  });

  it('a replay that removes an automatic entry records the change back; one that ends where it was records none', async () => {
    const trk = await automated();
    await send(trk.id, [
      [10, ORIGIN],
      [45, ORIGIN],
    ]);
    expect(await transitions(t, trk.id)).toEqual(['CREATED>IN_STORAGE']);
    // A late report outside at minute 20: the stay never confirmed, the tracker left at 20.
    await send(trk.id, [[20, FAR]]);
    const events = await eventsOf(t, trk.id);
    expect(events.map((e) => `${e.from_status}>${e.to_status}`)).toEqual([
      'CREATED>IN_STORAGE',
      'IN_STORAGE>IN_TRANSIT',
    ]);
    expect(events[1]).toMatchObject({ source: 'geofence', storage_location_id: null });
    expect((events[1].occurred_at as Date).toISOString()).toBe(at(20));
    // Another one at minute 5: in transit from 5 instead of 20 — the state is the same.
    await send(trk.id, [[5, FAR]]);
    expect(await eventsOf(t, trk.id)).toHaveLength(2);
  });

  it('a back-dated manual entry makes its event when the replay it starts makes it current', async () => {
    const trk = await automated();
    await send(trk.id, [
      [10, ORIGIN],
      [45, ORIGIN],
      [60, FAR],
    ]);
    expect(await transitions(t, trk.id)).toEqual(['CREATED>IN_STORAGE', 'IN_STORAGE>IN_TRANSIT']);
    const entry = await manual(trk.id, { status: 'DELIVERED', timestamp: at(5), delivery_location_id: D.id });
    await settled(t);
    const events = await eventsOf(t, trk.id);
    expect(events.map((e) => `${e.from_status}>${e.to_status}`)).toEqual([
      'CREATED>IN_STORAGE',
      'IN_STORAGE>IN_TRANSIT',
      'IN_TRANSIT>DELIVERED',
    ]);
    // The event shows the tracker's state after the change.
    const [state] = await t.db.query('SELECT storage_location_id, delivery_location_id FROM trackers WHERE id = $1', [
      trk.id,
    ]);
    expect(events[2]).toMatchObject({ source: 'manual', status_entry_id: entry.id, ...state });
  });
});
