import { jest } from '@jest/globals';
import { GeofenceInbox } from '../../src/geofences/geofence-inbox.js';
import { IN_FLIGHT_WAIT_MS } from '../../src/geofences/geofence-pending.repository.js';
import type { TestApp } from '../support/app.js';
import {
  at,
  auto,
  createGeofenceWorld,
  FAR,
  history,
  IN_D,
  pendingRows,
  sendTimeline,
  settled,
  visitRows,
  waitFor,
  whileHeld,
  whileIngestInFlight,
  type TimelinePoint,
} from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import type { TrackerWorld } from '../support/trackers.js';

/**
 * The queue of geofence marks: one row per write, taken by passes in the order writers began (a
 * batch that began after another still in flight waits for it, within a bound), dated right before
 * the writer commits, with the batch's own reports handed over in memory.
 * Delivery D: radius 200 m, dwell 0, 20 km north of the origin.
 */
describe('geofences: the queue of marks', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let D: { id: number };

  beforeAll(async () => ({ t, w, D } = await createGeofenceWorld()));
  afterAll(() => t.close());

  const tracker = () => t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
  const send = (trackerId: number, points: TimelinePoint[]) => sendTimeline(t, w.ingest, trackerId, points);
  const visits = (id: number) => visitRows(t, id);
  const pending = (id: number) => pendingRows(t, id);

  it('a batch that began after another batch still in flight waits for it: no pass takes the later one first', async () => {
    const x = await tracker();
    await whileIngestInFlight(t, async () => {
      await send(x.id, [[1, IN_D]]);
      // Several polls of the worker go by; the mark stays while the earlier batch is in flight.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await pending(x.id)).toBe(1);
      expect(await visits(x.id)).toEqual([]);
    });
    await settled(t);
    expect((await history(t, w.userA.auth, x.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
  });

  it('a batch waits for an earlier one in flight for IN_FLIGHT_WAIT_MS at most', async () => {
    const x = await tracker();
    await whileIngestInFlight(t, async () => {
      const sent = Date.now();
      await send(x.id, [[1, IN_D]]);
      await waitFor(async () => (await pending(x.id)) === 0, 'the mark to be taken', IN_FLIGHT_WAIT_MS + 5000);
      expect(Date.now() - sent).toBeGreaterThanOrEqual(IN_FLIGHT_WAIT_MS - 100);
      expect((await history(t, w.userA.auth, x.id)).slice(1)).toEqual([auto('DELIVERED', at(1), { delivery: D.id })]);
    });
  });

  it("a batch's mark is dated after every write of its statement, triggers included: the lag counts from the commit", async () => {
    const x = await tracker();
    // Records when each aggregate row of the batch is written (a BEFORE trigger runs as the row goes in).
    await t.db.query(`CREATE TABLE test_aggregate_writes (table_name text, at timestamptz)`);
    await t.db.query(`CREATE FUNCTION test_aggregate_written() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO test_aggregate_writes VALUES (TG_TABLE_NAME, clock_timestamp()); RETURN NEW; END $$`);
    for (const table of ['location_history_hourly', 'location_history_daily']) {
      await t.db.query(
        `CREATE TRIGGER test_aggregate_written BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION test_aggregate_written()`,
      );
    }
    // An earlier batch in flight keeps the mark in the queue, so it can be read.
    try {
      await whileIngestInFlight(t, async () => {
        await send(x.id, [
          [1, IN_D],
          [2, IN_D],
        ]);
        const [mark] = await t.db.query(
          `SELECT marked_at FROM geofence_pending WHERE $1 = ANY(coalesce(trackers, ARRAY[tracker_id]))`,
          [x.id],
        );
        const writes: { table_name: string; at: Date }[] = await t.db.query(
          `SELECT table_name, at FROM test_aggregate_writes`,
        );
        expect(new Set(writes.map((r) => r.table_name))).toEqual(
          new Set(['location_history_hourly', 'location_history_daily']),
        );
        for (const write of writes) expect(write.at.getTime()).toBeLessThanOrEqual(mark.marked_at.getTime());
      });
    } finally {
      for (const table of ['location_history_hourly', 'location_history_daily'])
        await t.db.query(`DROP TRIGGER test_aggregate_written ON ${table}`);
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
    await whileHeld(t, trk.id, async () => {
      await send(trk.id, [[1, FAR]]);
      await send(trk.id, [[2, FAR]]);
      expect(await pending(trk.id)).toBe(2);
      const step = (await t.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200)).body.test_steps
        .check_geofence_processing;
      expect(step.details.waiting_trackers).toBe(1);
    });
    await settled(t);
    expect((await history(t, w.userA.auth, trk.id)).slice(1)).toEqual([auto('IN_TRANSIT', at(1))]);
  });
});
