import { createPeerApp, createTestApp, GEOFENCE_ON, type TestApp } from '../support/app.js';
import {
  at,
  auto,
  createGeofenceWorld,
  createPlace,
  FAR,
  history,
  IN_D,
  north,
  ORIGIN,
  sendTimeline,
  settled,
  type TimelinePoint,
} from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { TRACKERS, trackerWorld, type TrackerWorld } from '../support/trackers.js';

/**
 * Automation is a replay: manual entries stand and restart it, late reports and back-dated entries
 * re-run it, and its queue survives crashes and is shared by instances.
 * Storage S: radius 500 m, dwell 30 min, at the origin. Delivery D: radius 200 m, dwell 0, 20 km north.
 */
describe('geofences: replay, manual entries, durability, instances', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number };
  let D: { id: number };

  beforeAll(async () => ({ t, w, S, D } = await createGeofenceWorld()));
  afterAll(() => t.close());

  const tracker = () => t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
  const send = (app: TestApp, trackerId: number, points: TimelinePoint[]) =>
    sendTimeline(app, w.ingest, trackerId, points);
  const manual = (trackerId: number, body: object) =>
    t.http().post(`${TRACKERS}/${trackerId}/status`).set(w.userA.auth).send(body).expect(201);

  it('a late report that makes an automatic entry wrong replaces it', async () => {
    const trk = await tracker();
    await send(t, trk.id, [
      [10, ORIGIN],
      [45, ORIGIN],
    ]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_STORAGE', at(10), { storage: S.id })]);
    // A report outside at minute 20 arrives late: the stay from 10 ends at 20 unconfirmed, the
    // tracker (still CREATED) leaves at 20, and the visit from 45 is too short to count.
    await send(t, trk.id, [[20, FAR]]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(20))]);
    expect((await t.db.query('SELECT status, storage_location_id FROM trackers WHERE id = $1', [trk.id]))[0]).toEqual({
      status: 'IN_TRANSIT',
      storage_location_id: null,
    });
    // Another one at minute 5: the tracker was already in transit from then on.
    await send(t, trk.id, [[5, FAR]]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(5))]);
  });

  it('manual entries stand; a visit entered before the latest manual entry never confirms into an entry', async () => {
    const trk = await tracker();
    await send(t, trk.id, [[10, ORIGIN]]);
    await settled(t);
    await manual(trk.id, { status: 'IN_TRANSIT', timestamp: at(15) });
    await send(t, trk.id, [[50, ORIGIN]]);
    await settled(t);
    const entries = await history(t, w.userA.auth, trk.id);
    expect(entries.map((e) => [e.status, e.source])).toEqual([
      ['CREATED', 'manual'],
      ['IN_TRANSIT', 'manual'],
    ]);
    expect(
      (await t.http().get(`${TRACKERS}/${trk.id}/visits`).set(w.userA.auth).expect(200)).body.items[0],
    ).toMatchObject({ entered_at: at(10), confirmed: true });
  });

  it('a back-dated manual entry re-runs the replay from its timestamp (DELIVERED stops automation)', async () => {
    const trk = await tracker();
    await send(t, trk.id, [
      [10, ORIGIN],
      [45, ORIGIN],
      [60, FAR],
    ]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([
      auto('IN_STORAGE', at(10), { storage: S.id }),
      auto('IN_TRANSIT', at(60)),
    ]);
    await manual(trk.id, { status: 'DELIVERED', timestamp: at(5), delivery_location_id: D.id });
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).map((e) => [e.status, e.source])).toEqual([
      ['CREATED', 'manual'],
      ['DELIVERED', 'manual'],
    ]);
    expect((await t.db.query('SELECT status FROM trackers WHERE id = $1', [trk.id]))[0].status).toBe('DELIVERED');
  });

  it('a mark left behind by a crashed worker (lapsed claim) or written before a restart is picked up', async () => {
    const trk = await tracker();
    // Reports stored with their mark, as if the worker that claimed them died mid-replay.
    await t.db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
       VALUES ($1, $2, $3, $4, 3, true), ($1, $5, $3, $4, 3, true)`,
      [trk.id, at(1), IN_D.latitude, IN_D.longitude, at(2)],
    );
    await t.db.query(
      `INSERT INTO geofence_pending (tracker_id, from_ts, claimed_until) VALUES ($1, $2, now() - interval '1 second')`,
      [trk.id, at(1)],
    );
    await settled(t, 3000);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a tracker deleted while marked leaves nothing behind', async () => {
    const trk = await tracker();
    await send(t, trk.id, [[1, IN_D]]);
    await t.http().delete(`${TRACKERS}/${trk.id}`).set(w.admin.auth).expect(200);
    await settled(t);
    for (const table of ['geofence_visits', 'geofence_pending', 'tracker_status_history']) {
      expect(await t.db.query(`SELECT 1 FROM ${table} WHERE tracker_id = $1`, [trk.id])).toEqual([]);
    }
  });

  it('two instances ingesting for the same tracker end the same as one in-order batch', async () => {
    const second = await createPeerApp(t, { env: GEOFENCE_ON });
    try {
      const [one, two] = [await tracker(), await tracker()];
      const points: [number, { latitude: number; longitude: number }][] = [
        [1, FAR],
        [10, ORIGIN],
        [25, ORIGIN],
        [41, ORIGIN],
        [50, FAR],
        [60, IN_D],
        [70, FAR],
      ];
      await send(t, one.id, points);
      const halves = [points.filter((_, i) => i % 2 === 0), points.filter((_, i) => i % 2 === 1)];
      await Promise.all([
        ...halves[1].map((p) => send(t, two.id, [p])),
        ...halves[0].reverse().map((p) => send(second, two.id, [p])),
      ]);
      await settled(t);
      const expected = [
        auto('IN_TRANSIT', at(1)),
        auto('IN_STORAGE', at(10), { storage: S.id }),
        auto('IN_TRANSIT', at(50)),
        auto('DELIVERED', at(60), { delivery: D.id }),
      ];
      expect((await history(t, w.userA.auth, one.id)).slice(1)).toEqual(expected);
      expect((await history(t, w.userA.auth, two.id)).slice(1)).toEqual(expected);
      const visits = async (id: number) =>
        t.db.query(
          'SELECT storage_location_id, delivery_location_id, entered_at, last_seen_at, exited_at, report_count, confirmed FROM geofence_visits WHERE tracker_id = $1 ORDER BY entered_at',
          [id],
        );
      expect(await visits(two.id)).toEqual(await visits(one.id));
    } finally {
      await second.close();
    }
  });
});

describe('geofences: GEOFENCE_ENABLED=false', () => {
  it('turns off visits and automatic entries alike', async () => {
    const t = await createTestApp({ env: { GEOFENCE_ENABLED: 'false' } });
    try {
      const w = await trackerWorld(t);
      await createPlace(t, w.admin.auth, 'delivery', { ...ORIGIN, radius_m: 200, dwell_minutes: 0 });
      const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
      expect(
        (await postReports(t, w.ingest, [report(trk.id, at(1), ORIGIN), report(trk.id, at(2), north(-50_000))])).status,
      ).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const table of ['geofence_visits', 'geofence_pending'])
        expect(await t.db.query(`SELECT 1 FROM ${table}`)).toEqual([]);
      expect((await history(t, w.userA.auth, trk.id)).map((e) => e.source)).toEqual(['manual']);
    } finally {
      await t.close();
    }
  });
});
