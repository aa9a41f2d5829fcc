import fc from 'fast-check';
import { filterReason } from '../../src/location-reports/location-rules.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { aggregateTables, postReports, rawReports, referenceAggregates, type ReportIn } from '../support/locations.js';

/*
 * Property: whatever the reports, their order, duplicates and the way they are split into batches
 * (sent one after another or all at once), the stored raw reports are the distinct reports sent,
 * and both aggregate tables equal a plain TypeScript recomputation from those raw reports.
 */

// Positions on, just inside and just outside every edge of the box, plus ordinary ones.
const LATITUDES = [18.1999, 18.2, 30, 53.5, 53.5001, 52.52, -33.9];
const LONGITUDES = [73.5999, 73.6, 100, 134.8, 134.8001, 13.405, -70.6];
const BASE = Date.UTC(2026, 0, 10);

const reportArb = fc.record({
  tracker: fc.integer({ min: 0, max: 2 }),
  // Three days of hours; minutes/seconds from a small set so equal timestamps and bucket edges occur.
  hour: fc.integer({ min: 0, max: 71 }),
  minute: fc.constantFrom(0, 0, 15, 59),
  second: fc.constantFrom(0, 0, 30, 59.999),
  latitude: fc.constantFrom(...LATITUDES),
  longitude: fc.constantFrom(...LONGITUDES),
  confidence: fc.integer({ min: 0, max: 3 }),
});

const scenarioArb = fc.record({
  reports: fc.array(reportArb, { minLength: 1, maxLength: 60 }),
  // Indexes of reports to send again (duplicates with another confidence).
  repeats: fc.array(fc.nat(), { maxLength: 10 }),
  order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 70, maxLength: 70 }),
  cuts: fc.array(fc.nat(), { maxLength: 4 }),
  parallel: fc.boolean(),
});

describe('Locations: aggregation property (fast-check)', () => {
  let t: TestApp;
  let ingest: CreatedUser;

  beforeAll(async () => ({ t, user: ingest } = await createTestAppWithUser('ingest')));
  afterAll(() => t.close());

  it('aggregates equal the reference computation for random reports, orders and batch splits', async () => {
    const run = (await t.factories.run()).id;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const trackers = [
          (await t.factories.tracker({ runId: run })).id,
          (await t.factories.tracker({ runId: run })).id,
          (await t.factories.tracker({ runId: run })).id,
        ];
        const items: ReportIn[] = scenario.reports.map((r) => ({
          tracker_id: trackers[r.tracker],
          timestamp: new Date(
            BASE + r.hour * 3_600_000 + r.minute * 60_000 + Math.round(r.second * 1000),
          ).toISOString(),
          latitude: r.latitude,
          longitude: r.longitude,
          confidence: r.confidence,
        }));
        for (const i of scenario.repeats) items.push({ ...items[i % scenario.reports.length], confidence: 7 });
        // Random order, then random batch boundaries.
        const sent = items
          .map((item, i) => ({ item, key: scenario.order[i % scenario.order.length] + i * 1e-9 }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.item);
        const cuts = [...new Set(scenario.cuts.map((c) => c % sent.length))].filter((c) => c > 0).sort((a, b) => a - b);
        const batches = [0, ...cuts].map((from, i, all) => sent.slice(from, all[i + 1] ?? sent.length));

        const responses = scenario.parallel
          ? await Promise.all(batches.map((batch) => postReports(t, ingest, batch)))
          : await batches.reduce<Promise<Awaited<ReturnType<typeof postReports>>[]>>(
              async (acc, batch) => [...(await acc), await postReports(t, ingest, batch)],
              Promise.resolve([]),
            );
        for (const res of responses) expect(res.status).toBe(200);

        // Raw: one row per distinct (tracker, timestamp, latitude, longitude); sequential sends keep the first occurrence.
        const keyOf = (r: { tracker_id?: number; timestamp: string; latitude: number; longitude: number }) =>
          `${r.tracker_id}|${r.timestamp}|${r.latitude}|${r.longitude}`;
        const firstByKey = new Map<string, ReportIn>();
        for (const item of sent) if (!firstByKey.has(keyOf(item))) firstByKey.set(keyOf(item), item);
        const raw = await rawReports(t.db, trackers);
        expect(raw.map(keyOf).sort()).toEqual([...firstByKey.keys()].sort());
        if (!scenario.parallel) {
          for (const row of raw) expect(row.confidence).toBe(firstByKey.get(keyOf(row))?.confidence);
        }
        for (const row of raw) expect(row.eligible).toBe(filterReason(row) === null);

        // Counters add up over the batches.
        const sum = (field: string) => responses.reduce((total, res) => total + (res.body[field] as number), 0);
        expect(sum('accepted')).toBe(firstByKey.size);
        expect(sum('duplicates')).toBe(sent.length - firstByKey.size);
        expect(sum('aggregated')).toBe(raw.filter((r) => filterReason(r) === null).length);
        expect(sum('filtered_low_confidence')).toBe(raw.filter((r) => filterReason(r) === 'low_confidence').length);
        expect(sum('filtered_manufacturing_region')).toBe(
          raw.filter((r) => filterReason(r) === 'manufacturing_region').length,
        );

        expect(await aggregateTables(t.db, trackers)).toEqual(referenceAggregates(raw));
      }),
      { numRuns: 25 },
    );
  });
});
