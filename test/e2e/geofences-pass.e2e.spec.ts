import { GeofenceProcessor } from '../../src/geofences/geofence-processor.service.js';
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
  ORIGIN,
  pendingRows,
  sendTimeline,
  settled,
  visitRows,
  waitFor,
  whileHeld,
  type TimelinePoint,
} from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Passes of the geofence worker replay many trackers in one transaction: a tracker another
 * transaction holds waits for the next pass (and may be gone by then), a change before what was
 * already replayed rewinds only to the latest visit that began before it, and visits keep their
 * integrity without per-row foreign keys. The queue of marks: geofences-queue.e2e.spec.ts.
 * Storage S: radius 500 m, dwell 30 min, at the origin. Delivery D: radius 200 m, dwell 0, 20 km north.
 */
describe('geofences: replay passes', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number };
  let D: { id: number };

  beforeAll(async () => ({ t, w, S, D } = await createGeofenceWorld()));
  afterAll(() => t.close());

  const tracker = () => t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
  const send = (trackerId: number, points: TimelinePoint[]) => sendTimeline(t, w.ingest, trackerId, points);
  const visits = (id: number) => visitRows(t, id);
  const pending = (id: number) => pendingRows(t, id);

  it('a tracker another transaction holds waits for a later pass; the others of the pass go on', async () => {
    const [held, free] = [await tracker(), await tracker()];
    await whileHeld(t, held.id, async () => {
      await send(held.id, [[1, IN_D]]);
      await send(free.id, [[1, IN_D]]);
      await waitFor(async () => (await pending(free.id)) === 0, 'the free tracker to be replayed');
      expect((await history(t, w.userA.auth, free.id)).slice(1)).toEqual([
        auto('DELIVERED', at(1), { delivery: D.id }),
      ]);
      // The held one is still marked, untouched, while its row is held.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await pending(held.id)).toBe(1);
      expect(await visits(held.id)).toEqual([]);
    });
    await settled(t);
    expect((await history(t, w.userA.auth, held.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a pass takes whole queue rows: a tracker of a taken row that another transaction holds keeps its mark, as old as it was', async () => {
    const [held, free] = [await tracker(), await tracker()];
    await whileHeld(t, held.id, async () => {
      // One write's row naming both trackers, two minutes old, stored with their reports.
      await t.db.query(
        `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible) VALUES ($1, $3, $4, $5, 3, true), ($2, $3, $4, $5, 3, true)`,
        [held.id, free.id, at(1), IN_D.latitude, IN_D.longitude],
      );
      await t.db.query(
        `INSERT INTO geofence_pending (trackers, froms, marked_at) VALUES (ARRAY[$1, $2]::int[], ARRAY[$3, $3]::timestamptz[], now() - interval '2 minutes')`,
        [held.id, free.id, at(1)],
      );
      await waitFor(async () => (await pending(free.id)) === 0, 'the free tracker to be replayed');
      expect((await history(t, w.userA.auth, free.id)).slice(1)).toEqual([
        auto('DELIVERED', at(1), { delivery: D.id }),
      ]);
      // The row is gone; the held tracker's mark was written back on its own, with the row's age.
      expect(
        await t.db.query(
          `SELECT tracker_id, trackers, marked_at < now() - interval '1 minute' AS as_old FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))`,
          [held.id],
        ),
      ).toEqual([{ tracker_id: held.id, trackers: null, as_old: true }]);
    });
    await settled(t);
    expect((await history(t, w.userA.auth, held.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a pass that fails is retried tracker by tracker: the others of its queue rows go on, the failing one is held back', async () => {
    const [bad, good] = [await tracker(), await tracker()];
    // Any visit of `bad` fails its replay.
    await t.db.query(
      `CREATE FUNCTION test_fail_visit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no visits for this tracker'; END $$`,
    );
    await t.db.query(
      `CREATE TRIGGER test_fail_visit BEFORE INSERT ON geofence_visits FOR EACH ROW WHEN (NEW.tracker_id = ${bad.id}) EXECUTE FUNCTION test_fail_visit()`,
    );
    try {
      // One batch: one queue row naming both.
      expect((await postReports(t, w.ingest, [report(bad.id, at(1), IN_D), report(good.id, at(1), IN_D)])).status).toBe(
        200,
      );
      await waitFor(async () => (await pending(good.id)) === 0, 'the good tracker to be replayed');
      expect((await history(t, w.userA.auth, good.id)).slice(1)).toEqual([
        auto('DELIVERED', at(1), { delivery: D.id }),
      ]);
      expect(
        await t.db.query(
          `SELECT tracker_id, claimed_until > now() AS held_back FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))`,
          [bad.id],
        ),
      ).toEqual([{ tracker_id: bad.id, held_back: true }]);
    } finally {
      await t.db.query('DROP TRIGGER test_fail_visit ON geofence_visits; DROP FUNCTION test_fail_visit()');
    }
    await t.db.query(`UPDATE geofence_pending SET claimed_until = now() - interval '1 second' WHERE tracker_id = $1`, [
      bad.id,
    ]);
    await settled(t);
    expect((await history(t, w.userA.auth, bad.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a tracker deleted while a pass skipped it leaves nothing behind, its marks included', async () => {
    const trk = await tracker();
    await whileHeld(t, trk.id, async (runner) => {
      await send(trk.id, [
        [1, IN_D],
        [2, FAR],
      ]);
      await runner.query('DELETE FROM trackers WHERE id = $1', [trk.id]);
    });
    await settled(t);
    for (const table of ['geofence_visits', 'geofence_pending', 'geofence_progress', 'tracker_status_history']) {
      expect(await t.db.query(`SELECT 1 FROM ${table} WHERE tracker_id = $1`, [trk.id])).toEqual([]);
    }
  });

  it('a back-dated manual entry racing new reports: whichever pass sees what, the end is the replay of all of them', async () => {
    const trk = await tracker();
    await send(trk.id, [
      [10, ORIGIN],
      [45, ORIGIN],
    ]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_STORAGE', at(10), { storage: S.id })]);
    // A back-dated manual entry goes in while more reports arrive: once both are in, the result is
    // that of the manual entry with every report (the stay from 10 began before it: no automatic entry).
    const entry = t
      .http()
      .post(`${TRACKERS}/${trk.id}/status`)
      .set(w.userA.auth)
      .send({ status: 'IN_TRANSIT', timestamp: at(20) });
    await Promise.all([
      entry.then((res) => expect(res.status).toBe(201)),
      send(trk.id, [
        [60, ORIGIN],
        [70, FAR],
      ]),
    ]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).map((e) => [e.status, e.source, e.timestamp])).toEqual([
      ['CREATED', 'manual', at(0)],
      ['IN_TRANSIT', 'manual', at(20)],
    ]);
    expect(
      (await visits(trk.id)).map((v) => [v.report_count, v.confirmed, v.exited_at?.toISOString() ?? null]),
    ).toEqual([[3, true, at(70)]]);
  });

  it('a late report rewinds to the latest visit that began before it: earlier visits stay as stored, the result is that of a full replay', async () => {
    const trk = await tracker();
    await send(trk.id, [
      [1, FAR],
      [10, ORIGIN],
      [45, ORIGIN],
      [50, FAR],
      [60, IN_D],
      [61, IN_D],
      [70, FAR],
      [80, ORIGIN],
      [120, ORIGIN],
    ]);
    await settled(t);
    const before = await visits(trk.id);
    expect(before.map((v) => [v.storage_location_id ?? `D${v.delivery_location_id}`, v.report_count])).toEqual([
      [S.id, 2],
      [`D${D.id}`, 2],
      [S.id, 2],
    ]);
    // Late: another sighting inside D at minute 65. The replay restarts at the visit entered at 60;
    // the stay at S from 10 keeps its row.
    await send(trk.id, [[65, IN_D]]);
    await settled(t);
    const after = await visits(trk.id);
    expect(after[0]).toEqual(before[0]);
    expect(after.map((v) => v.report_count)).toEqual([2, 3, 2]);
    const rewound = { visits: after.map(({ id: _, ...v }) => v), entries: await history(t, w.userA.auth, trk.id) };
    await t.app.get(GeofenceProcessor).rebuild({ trackerId: trk.id });
    expect({
      visits: (await visits(trk.id)).map(({ id: _, ...v }) => v),
      entries: await history(t, w.userA.auth, trk.id),
    }).toEqual(rewound);
  });

  it('a late report for a tracker that entered no location by then rewinds to the report itself, not to its first report', async () => {
    const trk = await tracker();
    await send(trk.id, [
      [1, FAR],
      [10, FAR],
      [20, FAR],
    ]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(1))]);
    // Behind the service's back: the automatic entry before the late report is moved. A replay from
    // the first report would recompute it (back to minute 1); one from the late report leaves it.
    await t.db.query(`UPDATE tracker_status_history SET timestamp = $2 WHERE tracker_id = $1 AND source = 'geofence'`, [
      trk.id,
      at(2),
    ]);
    await send(trk.id, [[5, FAR]]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(2))]);
    // A late report inside a location opens its visit as a full replay would.
    await send(trk.id, [
      [6, IN_D],
      [7, IN_D],
    ]);
    await settled(t);
    const rewound = (await visits(trk.id)).map(({ id: _, ...v }) => v);
    expect(rewound.map((v) => [v.delivery_location_id, v.report_count])).toEqual([[D.id, 2]]);
    await t.db.query(
      `UPDATE tracker_status_history SET timestamp = $2 WHERE tracker_id = $1 AND source = 'geofence' AND status = 'IN_TRANSIT'`,
      [trk.id, at(1)],
    );
    await t.app.get(GeofenceProcessor).rebuild({ trackerId: trk.id });
    expect((await visits(trk.id)).map(({ id: _, ...v }) => v)).toEqual(rewound);
  });

  it('a tracker never replayed starts from its first report, even when its first mark is for a later time', async () => {
    const trk = await tracker();
    // Stored without a mark (as with geofencing off, or loaded directly): never taken into account.
    await t.db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible, received_at)
       SELECT $1, ts, $2, $3, 3, true, now() FROM unnest($4::timestamptz[]) AS ts`,
      [trk.id, IN_D.latitude, IN_D.longitude, [at(1), at(2)]],
    );
    await send(trk.id, [[5, FAR]]);
    await settled(t);
    expect(
      (await visits(trk.id)).map((v) => [v.delivery_location_id, v.report_count, v.exited_at?.toISOString() ?? null]),
    ).toEqual([[D.id, 2, at(5)]]);
  });

  /** An ingest batch in flight, as far as the worker can tell: a transaction holding the location-writes lock shared. */
  it('visits keep their locations without foreign keys: a visited location cannot be deleted even bypassing the API', async () => {
    const trk = await tracker();
    // Never confirmed (dwell 10 h), so only the visit refers to the location.
    const place = await createPlace(t, w.admin.auth, 'storage', {
      ...north(-200_000),
      radius_m: 300,
      dwell_minutes: 600,
    });
    await send(trk.id, [[1, north(-200_000)]]);
    await settled(t);
    expect(await visits(trk.id)).toHaveLength(1);
    await expect(t.db.query('DELETE FROM storage_locations WHERE id = $1', [place.id])).rejects.toMatchObject({
      driverError: expect.objectContaining({ code: '23503' }),
    });
    expect((await t.http().delete(`/api/v1/storage-locations/${place.id}`).set(w.admin.auth).expect(409)).body).toEqual(
      { detail: 'Storage location is still referenced by visits' },
    );
  });
});
