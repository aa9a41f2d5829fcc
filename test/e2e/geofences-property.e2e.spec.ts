import fc from 'fast-check';
import { GEOFENCE_ON, type TestApp } from '../support/app.js';
import { referenceReplay, type RefFence, type RefManual, type RefReport } from '../support/geofence-reference.js';
import { at, BASE, createPlace, north } from '../support/geofences.js';
import { settled } from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/*
 * Property: however a tracker's reports are split into batches and ordered (late reports and
 * batches sent at once included), and wherever a back-dated manual entry falls among them, the
 * stored visits and automatic entries equal those of a plain reading of the rules
 * (test/support/geofence-reference.ts) over all reports in time order.
 * GEOFENCE_PROPERTY_RUNS raises the number of cases (e.g. 2000 locally). The pool is large enough
 * for the worker to replay three trackers at once.
 */

const RUNS = Number(process.env.GEOFENCE_PROPERTY_RUNS ?? 15);
const P0 = { latitude: -45, longitude: -100 };
/** Metres north of P0 where reports are placed: centres, edges, near bands and far away. */
const OFFSETS = [-20_000, 0, 150, 290, 320, 335, 400, 560, 640, 5000, 5090, 5240, 5260, 5290, 5400, 6000, 20_000];
const ACCURACIES = [null, null, 0, 40, 1000];

describe('geofences: order independence (property)', () => {
  let t: TestApp;
  let w: TrackerWorld;
  const fences: RefFence[] = [];

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: { ...GEOFENCE_ON, GEOFENCE_DWELL_MINUTES: '60', DB_POOL_SIZE: '9' } }));
    const place = async (kind: 'storage' | 'delivery', metres: number, radius: number, dwell: number | null) => {
      const p = north(metres, P0);
      const created = await createPlace(t, w.admin.auth, kind, { ...p, radius_m: radius, dwell_minutes: dwell });
      fences.push({ kind, id: created.id, lat: p.latitude, lon: p.longitude, radius, dwellMin: dwell ?? 60 });
    };
    await place('storage', 0, 300, 10);
    await place('storage', 400, 200, 0); // overlaps the first
    await place('delivery', 5000, 250, 5);
    await place('delivery', 5000, 250, null); // same centre: the lower id wins
    await place('storage', 5000, 100, 0); // same centre: storage before delivery
  });
  afterAll(() => t.close());

  const reportArb = fc.record({ offset: fc.constantFrom(...OFFSETS), accuracy: fc.constantFrom(...ACCURACIES) });
  const scenarioArb = fc
    .uniqueArray(fc.integer({ min: 1, max: 240 }), { minLength: 1, maxLength: 14 })
    .chain((minutes) =>
      fc.record({
        reports: fc.tuple(...minutes.map((minute) => reportArb.map((r) => ({ minute, ...r })))),
        order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
          minLength: minutes.length,
          maxLength: minutes.length,
        }),
        cuts: fc.array(fc.boolean(), { minLength: minutes.length, maxLength: minutes.length }),
        parallel: fc.boolean(),
        manual: fc.option(
          fc.record({
            minute: fc.integer({ min: 0, max: 240 }),
            kind: fc.constantFrom('IN_TRANSIT', 'IN_STORAGE', 'DELIVERED', 'CREATED'),
            after: fc.nat(),
          }),
          { nil: undefined },
        ),
      }),
    );

  it('ends in the visits and automatic entries of the reference replay', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
        const items = scenario.reports.map((r) => {
          const p = north(r.offset, P0);
          return report(trk.id, at(r.minute), { ...p, accuracy_m: r.accuracy });
        });
        const shuffled = items
          .map((item, i) => ({ item, key: scenario.order[i] }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.item);
        const batches: (typeof items)[] = [[]];
        shuffled.forEach((item, i) => {
          batches.at(-1)!.push(item);
          if (scenario.cuts[i] && i < shuffled.length - 1) batches.push([]);
        });
        const manual: RefManual[] = [{ ms: BASE, status: 'CREATED', storage: null }];
        const m = scenario.manual;
        const postManual = async () => {
          if (!m) return;
          const body = {
            status: m.kind,
            timestamp: at(m.minute),
            storage_location_id: m.kind === 'IN_STORAGE' ? fences[0].id : undefined,
            delivery_location_id: m.kind === 'DELIVERED' ? fences[2].id : undefined,
          };
          const res = await t.http().post(`${TRACKERS}/${trk.id}/status`).set(w.userA.auth).send(body);
          expect(res.status).toBe(201);
          manual.push({
            ms: BASE + m.minute * 60_000,
            status: m.kind,
            storage: m.kind === 'IN_STORAGE' ? fences[0].id : null,
          });
        };
        const manualAfter = m ? m.after % (batches.length + 1) : -1;
        const send = (batch: typeof items) =>
          postReports(t, w.ingest, batch).then((res) => expect(res.status).toBe(200));
        if (scenario.parallel) {
          await Promise.all([...batches.map(send), postManual()]);
        } else {
          for (let i = 0; i <= batches.length; i++) {
            if (i === manualAfter) await postManual();
            if (i < batches.length) await send(batches[i]);
          }
        }
        await settled(t, 5000);

        const refReports: RefReport[] = scenario.reports
          .map((r) => ({
            ms: BASE + r.minute * 60_000,
            lat: north(r.offset, P0).latitude,
            lon: P0.longitude,
            accuracy: r.accuracy,
          }))
          .sort((a, b) => a.ms - b.ms);
        manual.sort((a, b) => a.ms - b.ms);
        const expected = referenceReplay(fences, refReports, manual);

        const visits = await t.db.query(
          `SELECT coalesce(storage_location_id, delivery_location_id) AS id, storage_location_id IS NOT NULL AS storage,
                  (extract(epoch FROM entered_at) * 1000)::float8 AS entered, (extract(epoch FROM last_seen_at) * 1000)::float8 AS last,
                  (extract(epoch FROM exited_at) * 1000)::float8 AS exited, report_count AS count, confirmed
             FROM geofence_visits WHERE tracker_id = $1 ORDER BY entered_at`,
          [trk.id],
        );
        expect(visits).toEqual(
          expected.visits.map((v) => ({
            id: v.id,
            storage: v.kind === 'storage',
            entered: v.entered,
            last: v.last,
            exited: v.exited,
            count: v.count,
            confirmed: v.confirmed,
          })),
        );
        const entries = await t.db.query(
          `SELECT status, (extract(epoch FROM timestamp) * 1000)::float8 AS ms, storage_location_id AS storage, delivery_location_id AS delivery
             FROM tracker_status_history WHERE tracker_id = $1 AND source = 'geofence' ORDER BY timestamp, id`,
          [trk.id],
        );
        expect(entries).toEqual(expected.entries);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});
