import { jest } from '@jest/globals';
import { IN_FLIGHT_WAIT_MS } from '../../src/geofences/geofence-pending.repository.js';
import { GeofenceInbox } from '../../src/geofences/geofence-inbox.js';
import { GeofenceProcessor } from '../../src/geofences/geofence-processor.service.js';
import { LOCATION_WRITES_LOCK_KEY } from '../../src/locations/location-writes-lock.js';
import { createTestApp, GEOFENCE_ON, type TestApp } from '../support/app.js';
import { at, auto, createPlace, FAR, geofenceWorld, history, IN_D, north, ORIGIN, pendingRows, sendTimeline, settled, type TimelinePoint } from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Passes of the geofence worker replay many trackers in one transaction: a tracker another
 * transaction holds waits for the next pass (and may be gone by then), marks are an append-only
 * queue, a change before what was already replayed rewinds only to the latest visit that began
 * before it, and visits keep their integrity without per-row foreign keys.
 * Storage S: radius 500 m, dwell 30 min, at the origin. Delivery D: radius 200 m, dwell 0, 20 km north.
 */
describe('geofences: replay passes', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number };
  let D: { id: number };

  beforeAll(async () => {
    t = await createTestApp({ env: GEOFENCE_ON });
    ({ w, S, D } = await geofenceWorld(t));
  });
  afterAll(() => t.close());

  const tracker = () => t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
  const send = (trackerId: number, points: TimelinePoint[]) => sendTimeline(t, w.ingest, trackerId, points);
  interface VisitRow {
    id: string;
    storage_location_id: number | null;
    delivery_location_id: number | null;
    entered_at: Date;
    last_seen_at: Date;
    exited_at: Date | null;
    report_count: number;
    confirmed: boolean;
  }
  const visits = (id: number): Promise<VisitRow[]> =>
    t.db.query('SELECT id, storage_location_id, delivery_location_id, entered_at, last_seen_at, exited_at, report_count, confirmed FROM geofence_visits WHERE tracker_id = $1 ORDER BY entered_at, id', [id]);
  const pending = (id: number) => pendingRows(t, id);
  /** A transaction left open after `query`, as another writer's in progress. */
  const openTransaction = async (query: string, parameters: unknown[]) => {
    const runner = t.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query(query, parameters);
    return runner;
  };
  /** Holds the tracker's row as a manual entry or a tracker delete in progress does. */
  const hold = (id: number) => openTransaction('SELECT 1 FROM trackers WHERE id = $1 FOR UPDATE', [id]);
  const waitFor = async (check: () => Promise<boolean>, what: string, timeoutMs = 3000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  it('a tracker another transaction holds waits for a later pass; the others of the pass go on', async () => {
    const [held, free] = [await tracker(), await tracker()];
    const runner = await hold(held.id);
    try {
      await send(held.id, [[1, IN_D]]);
      await send(free.id, [[1, IN_D]]);
      await waitFor(async () => (await pending(free.id)) === 0, 'the free tracker to be replayed');
      expect((await history(t, w.userA.auth, free.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
      // The held one is still marked, untouched, while its row is held.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await pending(held.id)).toBe(1);
      expect(await visits(held.id)).toEqual([]);
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    await settled(t);
    expect((await history(t, w.userA.auth, held.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a pass takes whole queue rows: a tracker of a taken row that another transaction holds keeps its mark, as old as it was', async () => {
    const [held, free] = [await tracker(), await tracker()];
    const runner = await hold(held.id);
    try {
      // One write's row naming both trackers, two minutes old, stored with their reports.
      await t.db.query(
        `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible) VALUES ($1, $3, $4, $5, 3, true), ($2, $3, $4, $5, 3, true)`,
        [held.id, free.id, at(1), IN_D.latitude, IN_D.longitude],
      );
      await t.db.query(`INSERT INTO geofence_pending (trackers, froms, marked_at) VALUES (ARRAY[$1, $2]::int[], ARRAY[$3, $3]::timestamptz[], now() - interval '2 minutes')`, [held.id, free.id, at(1)]);
      await waitFor(async () => (await pending(free.id)) === 0, 'the free tracker to be replayed');
      expect((await history(t, w.userA.auth, free.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
      // The row is gone; the held tracker's mark was written back on its own, with the row's age.
      expect(
        await t.db.query(`SELECT tracker_id, trackers, marked_at < now() - interval '1 minute' AS as_old FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))`, [held.id]),
      ).toEqual([{ tracker_id: held.id, trackers: null, as_old: true }]);
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    await settled(t);
    expect((await history(t, w.userA.auth, held.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a pass that fails is retried tracker by tracker: the others of its queue rows go on, the failing one is held back', async () => {
    const [bad, good] = [await tracker(), await tracker()];
    // Any visit of `bad` fails its replay.
    await t.db.query(`CREATE FUNCTION test_fail_visit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no visits for this tracker'; END $$`);
    await t.db.query(`CREATE TRIGGER test_fail_visit BEFORE INSERT ON geofence_visits FOR EACH ROW WHEN (NEW.tracker_id = ${bad.id}) EXECUTE FUNCTION test_fail_visit()`);
    try {
      // One batch: one queue row naming both.
      expect((await postReports(t, w.ingest, [report(bad.id, at(1), IN_D), report(good.id, at(1), IN_D)])).status).toBe(200);
      await waitFor(async () => (await pending(good.id)) === 0, 'the good tracker to be replayed');
      expect((await history(t, w.userA.auth, good.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
      expect(await t.db.query(`SELECT tracker_id, claimed_until > now() AS held_back FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))`, [bad.id])).toEqual([
        { tracker_id: bad.id, held_back: true },
      ]);
    } finally {
      await t.db.query('DROP TRIGGER test_fail_visit ON geofence_visits; DROP FUNCTION test_fail_visit()');
    }
    await t.db.query(`UPDATE geofence_pending SET claimed_until = now() - interval '1 second' WHERE tracker_id = $1`, [bad.id]);
    await settled(t);
    expect((await history(t, w.userA.auth, bad.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a tracker deleted while a pass skipped it leaves nothing behind, its marks included', async () => {
    const trk = await tracker();
    const runner = await hold(trk.id);
    try {
      await send(trk.id, [[1, IN_D], [2, FAR]]);
      await runner.query('DELETE FROM trackers WHERE id = $1', [trk.id]);
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    await settled(t);
    for (const table of ['geofence_visits', 'geofence_pending', 'geofence_progress', 'tracker_status_history']) {
      expect(await t.db.query(`SELECT 1 FROM ${table} WHERE tracker_id = $1`, [trk.id])).toEqual([]);
    }
  });

  it('a back-dated manual entry racing new reports: whichever pass sees what, the end is the replay of all of them', async () => {
    const trk = await tracker();
    await send(trk.id, [[10, ORIGIN], [45, ORIGIN]]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_STORAGE', at(10), { storage: S.id })]);
    // A back-dated manual entry goes in while more reports arrive: once both are in, the result is
    // that of the manual entry with every report (the stay from 10 began before it: no automatic entry).
    const entry = t.http().post(`${TRACKERS}/${trk.id}/status`).set(w.userA.auth).send({ status: 'IN_TRANSIT', timestamp: at(20) });
    await Promise.all([entry.then((res) => expect(res.status).toBe(201)), send(trk.id, [[60, ORIGIN], [70, FAR]])]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).map((e) => [e.status, e.source, e.timestamp])).toEqual([
      ['CREATED', 'manual', at(0)],
      ['IN_TRANSIT', 'manual', at(20)],
    ]);
    expect((await visits(trk.id)).map((v) => [v.report_count, v.confirmed, v.exited_at?.toISOString() ?? null])).toEqual([[3, true, at(70)]]);
  });

  it('a late report rewinds to the latest visit that began before it: earlier visits stay as stored, the result is that of a full replay', async () => {
    const trk = await tracker();
    await send(trk.id, [[1, FAR], [10, ORIGIN], [45, ORIGIN], [50, FAR], [60, IN_D], [61, IN_D], [70, FAR], [80, ORIGIN], [120, ORIGIN]]);
    await settled(t);
    const before = await visits(trk.id);
    expect(before.map((v) => [v.storage_location_id ?? `D${v.delivery_location_id}`, v.report_count])).toEqual([[S.id, 2], [`D${D.id}`, 2], [S.id, 2]]);
    // Late: another sighting inside D at minute 65. The replay restarts at the visit entered at 60;
    // the stay at S from 10 keeps its row.
    await send(trk.id, [[65, IN_D]]);
    await settled(t);
    const after = await visits(trk.id);
    expect(after[0]).toEqual(before[0]);
    expect(after.map((v) => v.report_count)).toEqual([2, 3, 2]);
    const rewound = { visits: after.map(({ id: _, ...v }) => v), entries: await history(t, w.userA.auth, trk.id) };
    await t.app.get(GeofenceProcessor).rebuild({ trackerId: trk.id });
    expect({ visits: (await visits(trk.id)).map(({ id: _, ...v }) => v), entries: await history(t, w.userA.auth, trk.id) }).toEqual(rewound);
  });

  it('a late report for a tracker that entered no location by then rewinds to the report itself, not to its first report', async () => {
    const trk = await tracker();
    await send(trk.id, [[1, FAR], [10, FAR], [20, FAR]]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(1))]);
    // Behind the service's back: the automatic entry before the late report is moved. A replay from
    // the first report would recompute it (back to minute 1); one from the late report leaves it.
    await t.db.query(`UPDATE tracker_status_history SET timestamp = $2 WHERE tracker_id = $1 AND source = 'geofence'`, [trk.id, at(2)]);
    await send(trk.id, [[5, FAR]]);
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(2))]);
    // A late report inside a location opens its visit as a full replay would.
    await send(trk.id, [[6, IN_D], [7, IN_D]]);
    await settled(t);
    const rewound = (await visits(trk.id)).map(({ id: _, ...v }) => v);
    expect(rewound.map((v) => [v.delivery_location_id, v.report_count])).toEqual([[D.id, 2]]);
    await t.db.query(`UPDATE tracker_status_history SET timestamp = $2 WHERE tracker_id = $1 AND source = 'geofence' AND status = 'IN_TRANSIT'`, [trk.id, at(1)]);
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
    expect((await visits(trk.id)).map((v) => [v.delivery_location_id, v.report_count, v.exited_at?.toISOString() ?? null])).toEqual([[D.id, 2, at(5)]]);
  });

  /** An ingest batch in flight, as far as the worker can tell: a transaction holding the location-writes lock shared. */
  const ingestInFlight = () => openTransaction('SELECT pg_advisory_xact_lock_shared($1)', [LOCATION_WRITES_LOCK_KEY]);

  it('a batch that began after another batch still in flight waits for it: no pass takes the later one first', async () => {
    const x = await tracker();
    const earlier = await ingestInFlight();
    try {
      await send(x.id, [[1, IN_D]]);
      // Several polls of the worker go by; the mark stays while the earlier batch is in flight.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await pending(x.id)).toBe(1);
      expect(await visits(x.id)).toEqual([]);
    } finally {
      await earlier.commitTransaction();
      await earlier.release();
    }
    await settled(t);
    expect((await history(t, w.userA.auth, x.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a batch waits for an earlier one in flight for IN_FLIGHT_WAIT_MS at most', async () => {
    const x = await tracker();
    const stuck = await ingestInFlight();
    try {
      const sent = Date.now();
      await send(x.id, [[1, IN_D]]);
      await waitFor(async () => (await pending(x.id)) === 0, 'the mark to be taken', IN_FLIGHT_WAIT_MS + 5000);
      expect(Date.now() - sent).toBeGreaterThanOrEqual(IN_FLIGHT_WAIT_MS - 100);
      expect((await history(t, w.userA.auth, x.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
    } finally {
      await stuck.commitTransaction();
      await stuck.release();
    }
  });

  it("a batch's mark is dated after every write of its statement, triggers included: the lag counts from the commit", async () => {
    const x = await tracker();
    // Records when each aggregate row of the batch is written (a BEFORE trigger runs as the row goes in).
    await t.db.query(`CREATE TABLE test_aggregate_writes (table_name text, at timestamptz)`);
    await t.db.query(`CREATE FUNCTION test_aggregate_written() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO test_aggregate_writes VALUES (TG_TABLE_NAME, clock_timestamp()); RETURN NEW; END $$`);
    for (const table of ['location_history_hourly', 'location_history_daily']) {
      await t.db.query(`CREATE TRIGGER test_aggregate_written BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION test_aggregate_written()`);
    }
    // An earlier batch in flight keeps the mark in the queue, so it can be read.
    const earlier = await ingestInFlight();
    try {
      await send(x.id, [[1, IN_D], [2, IN_D]]);
      const [mark] = await t.db.query(`SELECT marked_at FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))`, [x.id]);
      const writes: { table_name: string; at: Date }[] = await t.db.query(`SELECT table_name, at FROM test_aggregate_writes`);
      expect(new Set(writes.map((r) => r.table_name))).toEqual(new Set(['location_history_hourly', 'location_history_daily']));
      for (const write of writes) expect(write.at.getTime()).toBeLessThanOrEqual(mark.marked_at.getTime());
    } finally {
      await earlier.commitTransaction();
      await earlier.release();
      for (const table of ['location_history_hourly', 'location_history_daily']) await t.db.query(`DROP TRIGGER test_aggregate_written ON ${table}`);
      await t.db.query('DROP FUNCTION test_aggregate_written(); DROP TABLE test_aggregate_writes');
    }
    await settled(t);
  });

  it('the reports a batch hands over in memory are exactly the rows it stored; a batch repeating stored reports hands over none', async () => {
    const [a, b] = [await tracker(), await tracker()];
    const inbox = t.app.get(GeofenceInbox);
    const held: { rowId: string; carried: boolean; rows: unknown[] }[] = [];
    const carry = inbox.carry.bind(inbox);
    const spy = jest.spyOn(inbox, 'carry').mockImplementation((rowId, ...rest) => {
      const carried = carry(rowId, ...rest);
      // Taken at once (the pass then reads them back): what the inbox would have handed over.
      const rows = carried ? [...inbox.take([rowId], () => []).values()].flat() : [];
      held.push({ rowId, carried, rows });
      return carried;
    });
    try {
      const ts = (s: number) => new Date(Date.parse(at(0)) + s * 1000).toISOString();
      const batch = [
        report(b.id, ts(5), { ...IN_D, accuracy_m: 7 }),
        report(a.id, ts(3), { ...FAR, confidence: 3 }),
        report(a.id, ts(3), { ...FAR, confidence: 0, accuracy_m: 99 }), // the same report again: the first one counts
        report(a.id, ts(4), { ...FAR, confidence: 1 }), // stored, not eligible
        report(a.id, ts(2), { latitude: 30, longitude: 100 }), // manufacturing region: stored, not eligible
        report(999_999, ts(1)), // unknown tracker
        report(b.id, '2026-01-01T00:00:01+01:00', { ...IN_D, accuracy_m: 1 }), // not canonical: normalised
        report(a.id, ts(1), { ...FAR, accuracy_m: 3 }),
      ];
      expect((await postReports(t, w.ingest, batch)).status).toBe(200);
      const stored = await t.db.query(
        `SELECT tracker_id, id::float8 AS id, (extract(epoch FROM timestamp) * 1000000)::float8 AS ts, latitude, longitude, accuracy_m
           FROM location_reports WHERE tracker_id = ANY($1) AND eligible ORDER BY id`,
        [[a.id, b.id]],
      );
      expect(held).toHaveLength(1);
      expect(held[0].carried).toBe(true);
      expect(stored).toHaveLength(4);
      expect([...held[0].rows].sort((x, y) => (x as { id: number }).id - (y as { id: number }).id)).toEqual(stored);
      // Sent again with one new report: the repeated ones are skipped as stored, so nothing is held.
      expect((await postReports(t, w.ingest, [...batch, report(a.id, ts(6), FAR)])).status).toBe(200);
      expect(held).toHaveLength(2);
      expect(held[1].carried).toBe(false);
    } finally {
      spy.mockRestore();
    }
    await settled(t);
  });

  it('marks are a queue of writes: several for one tracker make one replay; health counts the tracker once', async () => {
    const trk = await tracker();
    const runner = await hold(trk.id);
    try {
      await send(trk.id, [[1, FAR]]);
      await send(trk.id, [[2, FAR]]);
      expect(await pending(trk.id)).toBe(2);
      const step = (await t.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200)).body.test_steps.check_geofence_processing;
      expect(step.details.waiting_trackers).toBe(1);
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(1))]);
  });

  it('visits keep their locations without foreign keys: a visited location cannot be deleted even bypassing the API', async () => {
    const trk = await tracker();
    // Never confirmed (dwell 10 h), so only the visit refers to the location.
    const place = await createPlace(t, w.admin.auth, 'storage', { ...north(-200_000), radius_m: 300, dwell_minutes: 600 });
    await send(trk.id, [[1, north(-200_000)]]);
    await settled(t);
    expect(await visits(trk.id)).toHaveLength(1);
    await expect(t.db.query('DELETE FROM storage_locations WHERE id = $1', [place.id])).rejects.toMatchObject({ driverError: expect.objectContaining({ code: '23503' }) });
    expect((await t.http().delete(`/api/v1/storage-locations/${place.id}`).set(w.admin.auth).expect(409)).body).toEqual({ detail: 'Storage location is still referenced by visits' });
  });
});
