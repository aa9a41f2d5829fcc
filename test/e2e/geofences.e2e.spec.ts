import type { TestApp } from '../support/app.js';
import {
  at,
  auto,
  createGeofenceWorld,
  createPlace,
  FAR,
  history,
  IN_D,
  north,
  sendTimeline,
  settled,
  type TimelinePoint,
} from '../support/geofences.js';
import { TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * The rules by which reports move trackers: visits open, close and confirm in report time, and a
 * replay turns confirmed visits and departures into automatic status entries.
 * Storage S: radius 500 m, dwell 30 min, at the origin. Delivery D: radius 200 m, dwell 0, 20 km north.
 */
describe('geofences: visits and automatic status entries', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number; name: string };
  let D: { id: number; name: string };
  const inS = (metres = 0) => north(metres);

  beforeAll(async () => ({ t, w, S, D } = await createGeofenceWorld()));
  afterAll(() => t.close());

  const tracker = (options: { delivery?: number; createdAt?: string } = {}) =>
    t.factories.tracker({
      runId: w.runA.id,
      createdAt: options.createdAt ?? at(0),
      deliveryLocationId: options.delivery ?? null,
    });
  const send = async (trackerId: number, points: TimelinePoint[]) => {
    await sendTimeline(t, w.ingest, trackerId, points);
    await settled(t);
  };
  const visits = async (trackerId: number) =>
    (await t.http().get(`${TRACKERS}/${trackerId}/visits`).set(w.userA.auth).expect(200)).body;
  const current = async (trackerId: number) =>
    (
      await t.db.query('SELECT status, storage_location_id, delivery_location_id FROM trackers WHERE id = $1', [
        trackerId,
      ])
    )[0];

  it('rule 1, dwell confirmation, rule 2 at entered_at, a near report changes nothing, rule 4 on leaving', async () => {
    const trk = await tracker();
    // The tracker list is cached before automation moves the tracker: the change must show anyway.
    await t.http().get(`${TRACKERS}?id=${trk.id}`).set(w.userA.auth).expect(200);
    await send(trk.id, [[1, FAR]]);
    expect(await history(t, w.userA.auth, trk.id)).toEqual([
      expect.objectContaining({ status: 'CREATED', source: 'manual' }),
      auto('IN_TRANSIT', at(1)),
    ]);

    await send(trk.id, [
      [10, inS(100)],
      [25, inS(-200)],
    ]);
    let page = await visits(trk.id);
    expect(page).toMatchObject({
      total: 1,
      items: [
        {
          location_type: 'storage',
          location_id: S.id,
          location_name: S.name,
          entered_at: at(10),
          last_seen_at: at(25),
          exited_at: null,
          duration_minutes: 15,
          report_count: 2,
          confirmed: false,
        },
      ],
    });
    expect((await current(trk.id)).status).toBe('IN_TRANSIT');

    await send(trk.id, [[40, inS(0)]]);
    expect(await history(t, w.userA.auth, trk.id)).toEqual([
      expect.anything(),
      auto('IN_TRANSIT', at(1)),
      auto('IN_STORAGE', at(10), { storage: S.id }),
    ]);
    expect(await current(trk.id)).toEqual({
      status: 'IN_STORAGE',
      storage_location_id: S.id,
      delivery_location_id: null,
    });
    const listed = await t.http().get(`${TRACKERS}?id=${trk.id}`).set(w.userA.auth).expect(200);
    expect(listed.body.items[0].status).toBe('IN_STORAGE');

    // 530 m from the centre: not inside (> 500) and not outside (≤ 550): the visit stays open.
    await send(trk.id, [[50, inS(530)]]);
    page = await visits(trk.id);
    expect(page.items[0]).toMatchObject({
      exited_at: null,
      last_seen_at: at(40),
      report_count: 3,
      confirmed: true,
      duration_minutes: 30,
    });

    await send(trk.id, [[60, FAR]]);
    page = await visits(trk.id);
    expect(page.items[0]).toMatchObject({ exited_at: at(60), confirmed: true });
    expect((await history(t, w.userA.auth, trk.id)).slice(3)).toEqual([auto('IN_TRANSIT', at(60))]);
    const [entry] = await t.db.query(
      "SELECT created_by, notes FROM tracker_status_history WHERE tracker_id = $1 AND source = 'geofence' LIMIT 1",
      [trk.id],
    );
    expect(entry).toEqual({ created_by: null, notes: null });
  });

  it('rule 3: a confirmed delivery visit delivers at entered_at and gives a destination; DELIVERED is final', async () => {
    const trk = await tracker();
    await send(trk.id, [
      [1, FAR],
      [5, IN_D],
      [30, inS()],
      [70, inS()],
      [80, FAR],
    ]);
    expect(await history(t, w.userA.auth, trk.id)).toEqual([
      expect.anything(),
      auto('IN_TRANSIT', at(1)),
      auto('DELIVERED', at(5), { delivery: D.id }),
    ]);
    expect(await current(trk.id)).toEqual({
      status: 'DELIVERED',
      storage_location_id: null,
      delivery_location_id: D.id,
    });
    expect(
      (await visits(trk.id)).items.map((v: { location_type: string; confirmed: boolean }) => [
        v.location_type,
        v.confirmed,
      ]),
    ).toEqual([
      ['storage', true],
      ['delivery', true],
    ]);
  });

  it('an existing destination stays when automation delivers elsewhere', async () => {
    const trk = await tracker({ delivery: w.delivery.id });
    await send(trk.id, [[5, IN_D]]);
    expect(await current(trk.id)).toEqual({
      status: 'DELIVERED',
      storage_location_id: null,
      delivery_location_id: w.delivery.id,
    });
  });

  it('reports before the first status entry only make visits', async () => {
    const trk = await tracker({ createdAt: at(100) });
    await send(trk.id, [
      [1, FAR],
      [10, inS()],
      [50, inS()],
      [60, FAR],
    ]);
    expect((await visits(trk.id)).items).toMatchObject([{ confirmed: true, entered_at: at(10), exited_at: at(60) }]);
    expect(await history(t, w.userA.auth, trk.id)).toEqual([
      expect.objectContaining({ status: 'CREATED', source: 'manual' }),
    ]);
  });

  it('ineligible reports (low confidence, manufacturing region) never drive anything', async () => {
    const trk = await tracker();
    await send(trk.id, [
      [1, FAR, { confidence: 1 }],
      [5, { latitude: 31.2, longitude: 121.5 }],
    ]);
    expect(await t.db.query('SELECT 1 FROM geofence_pending')).toEqual([]);
    expect((await visits(trk.id)).total).toBe(0);
    expect(await history(t, w.userA.auth, trk.id)).toHaveLength(1);
  });

  it('inside several locations the nearest wins; at equal distance storage comes before delivery', async () => {
    const twinS = await createPlace(t, w.admin.auth, 'storage', {
      ...north(0, { latitude: -35, longitude: -20 }),
      radius_m: 300,
      dwell_minutes: 0,
    });
    const twinD = await createPlace(t, w.admin.auth, 'delivery', {
      ...north(0, { latitude: -35, longitude: -20 }),
      radius_m: 300,
      dwell_minutes: 0,
    });
    const nearD = await createPlace(t, w.admin.auth, 'delivery', {
      ...north(400, { latitude: -35, longitude: -20 }),
      radius_m: 300,
      dwell_minutes: 0,
    });
    const trk = await tracker();
    await send(trk.id, [[1, { latitude: -35, longitude: -20 }]]);
    expect((await visits(trk.id)).items[0]).toMatchObject({ location_type: 'storage', location_id: twinS.id });
    // 250 m north: inside all three and nearest to nearD (150 m), but inside the open visit's
    // location too, which keeps the visit.
    await send(trk.id, [[2, north(250, { latitude: -35, longitude: -20 })]]);
    expect((await visits(trk.id)).items).toMatchObject([{ location_id: twinS.id, report_count: 2, exited_at: null }]);
    // 350 m north: outside twinS (350 > 330), inside nearD only: the storage visit closes, a delivery visit opens.
    await send(trk.id, [[3, north(350, { latitude: -35, longitude: -20 })]]);
    const page = await visits(trk.id);
    expect(
      page.items.map((v: { location_id: number; exited_at: string | null }) => [v.location_id, v.exited_at]),
    ).toEqual([
      [nearD.id, null],
      [twinS.id, at(3)],
    ]);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([
      auto('IN_STORAGE', at(1), { storage: twinS.id }),
      auto('DELIVERED', at(3), { delivery: nearD.id }),
    ]);
    expect(twinD.id).toBeGreaterThan(0);
    expect(await current(trk.id)).toMatchObject({ status: 'DELIVERED', delivery_location_id: nearD.id });
  });

  it('accuracy widens a geofence by at most its radius', async () => {
    const trk = await tracker();
    // 700 m away with accuracy 300: inside (700 ≤ 500 + 300).
    await send(trk.id, [[1, inS(700), { accuracy_m: 300 }]]);
    expect((await visits(trk.id)).items[0]).toMatchObject({ location_id: S.id, exited_at: null });
    // 1 100 m away with accuracy 5 000, capped at 500: 1100 − 500 = 600 > 550 → outside, the visit closes.
    await send(trk.id, [[2, inS(1100), { accuracy_m: 5000 }]]);
    expect((await visits(trk.id)).items[0]).toMatchObject({ exited_at: at(2) });
  });
});
