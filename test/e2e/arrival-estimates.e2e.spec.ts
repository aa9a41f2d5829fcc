import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { percentileCont } from '../support/alerts.js';
import type { TestApp } from '../support/app.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('Arrival estimates on GET /trackers/{id}', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let seq = 0;
  const now = Date.now();

  /**
   * A tracker of `runId` with back-dated entries `[status, ms ago, delivery location?]`, its state
   * following its latest entry.
   */
  async function tracker(runId: number, entries: [string, number, number?][], destination?: number): Promise<number> {
    const [{ id }] = (await t.db.query(
      `INSERT INTO trackers (name, production_run_id, delivery_location_id) VALUES ($1, $2, $3) RETURNING id`,
      [`eta-${++seq}`, runId, destination ?? null],
    )) as { id: number }[];
    for (const [status, ago, delivery] of entries) {
      await t.db.query(
        `INSERT INTO tracker_status_history (tracker_id, status, timestamp, delivery_location_id) VALUES ($1, $2, $3, $4)`,
        [id, status, new Date(now - ago), delivery ?? null],
      );
    }
    await t.db.query('SELECT trackers_follow_latest_entry(ARRAY[$1]::int[])', [id]);
    return id;
  }

  /** A delivered journey: created, in transit `startAgo`, delivered to `destination` after `hours`. */
  const journey = (runId: number, destination: number, startAgo: number, hours: number) =>
    tracker(runId, [
      ['CREATED', startAgo + HOUR],
      ['IN_TRANSIT', startAgo],
      ['DELIVERED', startAgo - hours * HOUR, destination],
    ]);

  const eta = async (id: number, auth = w.admin.auth) => {
    const res = await t.http().get(`${TRACKERS}/${id}`).set(auth).expect(200);
    return res.body.eta as { expected_at: string; latest_at: string; basis: string; sample_size: number } | null;
  };

  const expected = (start: number, hours: number[], basis: string) => ({
    expected_at: new Date(start + percentileCont(hours, 0.5) * HOUR).toISOString(),
    latest_at: new Date(start + percentileCont(hours, 0.8) * HOUR).toISOString(),
    basis,
    sample_size: hours.length,
  });

  const destHours = [30, 50, 70, 75, 100, 130, 190]; // to w.delivery, client A
  const otherHours = [20, 60, 90, 200]; // to w.delivery2, client A

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
    for (const [i, hours] of destHours.entries()) await journey(w.runA.id, w.delivery.id, (20 + i) * DAY, hours);
    for (const [i, hours] of otherHours.entries()) await journey(w.runA2.id, w.delivery2.id, (30 + i) * DAY, hours);
    // Client A, but delivered more than 180 days ago: not comparable.
    await journey(w.runA.id, w.delivery.id, 300 * DAY, 1_000);
    // Client B's journeys to the same destination, far longer: never read for A's trackers.
    for (let i = 0; i < 6; i++) await journey(w.runB.id, w.delivery.id, (100 + i) * DAY, 2_000 + i);
  }, 60_000);

  afterAll(() => t?.close());

  it('uses the longer journeys to its destination: p50 and p80 by linear interpolation, from the start', async () => {
    const start = now - 40 * HOUR;
    const id = await tracker(
      w.runA.id,
      [
        ['CREATED', 41 * HOUR],
        ['IN_TRANSIT', 40 * HOUR],
      ],
      w.delivery.id,
    );
    // Longer than the 40 h elapsed: 50, 70, 75, 100, 130, 190 (the 30 h journey is shorter).
    expect(await eta(id)).toEqual(expected(start, [50, 70, 75, 100, 130, 190], 'destination'));
  });

  it('starts at the first IN_TRANSIT after the latest CREATED entry (a re-created tracker starts again)', async () => {
    const start = now - 10 * HOUR;
    const id = await tracker(
      w.runA.id,
      [
        ['CREATED', 100 * HOUR],
        ['IN_TRANSIT', 90 * HOUR],
        ['CREATED', 12 * HOUR],
        ['IN_TRANSIT', 10 * HOUR],
        ['IN_STORAGE', 5 * HOUR],
        ['IN_TRANSIT', 2 * HOUR],
      ],
      w.delivery.id,
    );
    expect(await eta(id)).toEqual(expected(start, destHours, 'destination'));
  });

  it('falls back to all destinations of the client when fewer than 5 to its own are longer', async () => {
    const start = now - 80 * HOUR;
    const id = await tracker(w.runA.id, [['IN_TRANSIT', 80 * HOUR]], w.delivery.id);
    // To the destination only 100, 130, 190 are longer; over all of A's: 100, 130, 190, 90, 200.
    expect(await eta(id)).toEqual(expected(start, [100, 130, 190, 90, 200], 'all'));
  });

  it('has none when fewer than 5 of all the client journeys are longer, and none outside transit and storage', async () => {
    const late = await tracker(w.runA.id, [['IN_TRANSIT', 150 * HOUR]], w.delivery.id);
    expect(await eta(late)).toBeNull(); // 190 and 200 only
    const created = await tracker(w.runA.id, [['CREATED', HOUR]], w.delivery.id);
    expect(await eta(created)).toBeNull();
    const delivered = await tracker(w.runA.id, [
      ['IN_TRANSIT', 2 * HOUR],
      ['DELIVERED', HOUR, w.delivery.id],
    ]);
    expect(await eta(delivered)).toBeNull();
    const noDestination = await tracker(w.runA.id, [['IN_TRANSIT', HOUR]]);
    expect(await eta(noDestination)).toBeNull();
    const neverInTransit = await tracker(w.runA.id, [['IN_STORAGE', HOUR]], w.delivery.id);
    expect(await eta(neverInTransit)).toBeNull();
  });

  it("client B's estimate reads B's journeys only, and B's user cannot see A's tracker", async () => {
    const start = now - 10 * HOUR;
    const id = await tracker(w.runB.id, [['IN_TRANSIT', 10 * HOUR]], w.delivery.id);
    expect(await eta(id)).toEqual(expected(start, [2000, 2001, 2002, 2003, 2004, 2005], 'destination'));
    const a = await tracker(w.runA.id, [['IN_TRANSIT', 10 * HOUR]], w.delivery.id);
    const userB = await t.factories.user({ clients: [w.clientB.id] });
    await t.http().get(`${TRACKERS}/${a}`).set(userB.auth).expect(404);
    expect(await eta(a, w.userA.auth)).toEqual(expected(start, destHours, 'destination'));
  });

  it("a change of the tracker's own state is seen at once (the estimate is kept per state)", async () => {
    const id = await tracker(w.runA.id, [['IN_TRANSIT', 10 * HOUR]], w.delivery.id);
    expect(await eta(id)).not.toBeNull();
    await t
      .http()
      .post(`${TRACKERS}/${id}/status`)
      .set(w.admin.auth)
      .send({ status: 'DELIVERED', delivery_location_id: w.delivery.id })
      .expect(201);
    expect(await eta(id)).toBeNull();
  });
});
