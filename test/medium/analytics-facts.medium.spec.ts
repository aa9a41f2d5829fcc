import fc from 'fast-check';
import { aggregatesQuery, jsonRowsQuery, trackerRowsQuery } from '../../src/analytics/analytics.sql.js';
import { AccessScope } from '../../src/common/auth/access-scope.js';
import type { Sql } from '../../src/infrastructure/database/db.js';
import {
  referenceAggregatesQuery,
  referenceFullAnalyticsQuery,
  referenceTrackerRowsQuery,
} from '../support/analytics-reference.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * Property: the analytics statements over the journey facts (kept by triggers on every status
 * write) answer exactly what the windowed statements over the raw status entries answer
 * (test/support/analytics-reference.ts), for every as_of — before, at, between and after the
 * entries — whatever sequence of writes built the histories: single and multi-row inserts,
 * back-dated entries, updates moving an entry in time or to another tracker, deletes (one entry,
 * a tracker's automatic entries, a whole tracker), and a storage location rename.
 * ANALYTICS_PROPERTY_RUNS raises the number of cases.
 *
 * Entry timestamps are whole seconds on a grid of 432 s (half a rounding step of days), so sums
 * and differences land exactly on rounding boundaries often; as_of values also take milliseconds.
 */

const RUNS = Number(process.env.ANALYTICS_PROPERTY_RUNS ?? 25);
const BASE = Date.parse('2026-01-01T00:00:00Z');
const STEP_MS = 432_000;
const STATUSES = ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'] as const;

interface EntrySpec {
  tracker: number;
  status: (typeof STATUSES)[number];
  step: number;
  location: number;
  source: 'manual' | 'geofence';
}

type Op =
  | { kind: 'insert'; entries: EntrySpec[] }
  | { kind: 'deleteOne'; pick: number }
  | { kind: 'deleteAutomatic'; tracker: number }
  | { kind: 'move'; pick: number; step: number; tracker: number }
  | { kind: 'deleteTracker'; tracker: number }
  | { kind: 'rename'; location: number };

const TRACKERS = 5;
const entryArb: fc.Arbitrary<EntrySpec> = fc.record({
  tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
  status: fc.constantFrom(...STATUSES),
  step: fc.integer({ min: 0, max: 40 }),
  location: fc.integer({ min: 0, max: 2 }),
  source: fc.constantFrom('manual', 'manual', 'geofence'),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      entries: fc.array(entryArb, { minLength: 1, maxLength: 6 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('deleteOne' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteAutomatic' as const),
      tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('move' as const),
      pick: fc.nat(),
      step: fc.integer({ min: 0, max: 40 }),
      tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteTracker' as const),
      tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('rename' as const), location: fc.integer({ min: 0, max: 2 }) }),
  },
);
/** as_of as a grid step plus milliseconds (0 = exactly on the grid). */
const asOfArb = fc.record({
  step: fc.integer({ min: -2, max: 45 }),
  ms: fc.constantFrom(0, 0, 1, 999, 216_000, 431_999),
});

describe('analytics over journey facts equal the windowed reference (property)', () => {
  let m: MediumContext;
  let runId: number;
  let storage: number[];
  let delivery: number[];
  const scope = AccessScope.admin();

  beforeAll(async () => {
    m = await createMediumContext();
    runId = (await m.factories.run()).id;
    storage = [(await m.factories.storageLocation('North "cold"')).id, (await m.factories.storageLocation('South')).id];
    delivery = [
      (await m.factories.deliveryLocation('Berlin')).id,
      (await m.factories.deliveryLocation('Amsterdam')).id,
    ];
  });
  afterAll(async () => m?.close());

  const q = <T>(statement: Sql): Promise<T[]> => m.db.query(statement.text, statement.values);

  async function createTrackers(): Promise<number[]> {
    await m.db.query(`DELETE FROM trackers WHERE production_run_id = $1`, [runId]);
    const ids: number[] = [];
    for (let i = 0; i < TRACKERS; i++) {
      const [row] = await m.db.query(
        `INSERT INTO trackers (name, production_run_id, status, delivery_location_id, created_at, updated_at)
         VALUES ($1, $2, 'CREATED', $3, $4, $4) RETURNING id`,
        [`=P${i}`, runId, i % 2 ? delivery[i % 2] : null, new Date(BASE + (i * 3 - 1) * STEP_MS).toISOString()],
      );
      ids.push(row.id);
    }
    return ids;
  }

  async function apply(op: Op, trackers: number[]): Promise<void> {
    const entryIds = async (): Promise<string[]> =>
      (
        await m.db.query(
          `SELECT h.id FROM tracker_status_history h JOIN trackers t ON t.id = h.tracker_id WHERE t.production_run_id = $1 ORDER BY h.id`,
          [runId],
        )
      ).map((r: { id: string }) => r.id);
    switch (op.kind) {
      case 'insert': {
        const rows = op.entries.map((e) => ({
          tracker: trackers[e.tracker],
          status: e.status,
          at: new Date(BASE + e.step * STEP_MS).toISOString(),
          storage: e.status === 'IN_STORAGE' && e.location < 2 ? storage[e.location] : null,
          delivery: e.status === 'DELIVERED' && e.location < 2 ? delivery[e.location] : null,
          source: e.source,
        }));
        // One statement for all of them, as an import or a replay writes.
        await m.db.query(
          `INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, source)
           SELECT * FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::int[], $5::int[], $6::text[])`,
          [
            rows.map((r) => r.tracker),
            rows.map((r) => r.status),
            rows.map((r) => r.at),
            rows.map((r) => r.storage),
            rows.map((r) => r.delivery),
            rows.map((r) => r.source),
          ],
        );
        return;
      }
      case 'deleteOne': {
        const ids = await entryIds();
        if (ids.length)
          await m.db.query(`DELETE FROM tracker_status_history WHERE id = $1`, [ids[op.pick % ids.length]]);
        return;
      }
      case 'deleteAutomatic':
        await m.db.query(`DELETE FROM tracker_status_history WHERE tracker_id = $1 AND source = 'geofence'`, [
          trackers[op.tracker],
        ]);
        return;
      case 'move': {
        const ids = await entryIds();
        if (ids.length)
          await m.db.query(`UPDATE tracker_status_history SET timestamp = $2, tracker_id = $3 WHERE id = $1`, [
            ids[op.pick % ids.length],
            new Date(BASE + op.step * STEP_MS).toISOString(),
            trackers[op.tracker],
          ]);
        return;
      }
      case 'deleteTracker': {
        const [row] = await m.db.query(
          `WITH gone AS (DELETE FROM trackers WHERE id = $1 RETURNING name, production_run_id, delivery_location_id, created_at)
           INSERT INTO trackers (name, production_run_id, status, delivery_location_id, created_at, updated_at)
           SELECT name, production_run_id, 'CREATED', delivery_location_id, created_at, created_at FROM gone RETURNING id`,
          [trackers[op.tracker]],
        );
        trackers[op.tracker] = row.id;
        return;
      }
      case 'rename':
        await m.db.query(`UPDATE storage_locations SET name = name || $2 WHERE id = $1`, [
          storage[op.location % 2],
          `,${op.location}`,
        ]);
        return;
    }
  }

  async function expectSameAnswers(asOf: Date): Promise<void> {
    // The JSON result's list: one item per tracker, which Node joins with ',' between the brackets.
    const [{ tracker_analytics_json: list, ...aggregateColumns }] = await q<{ tracker_analytics_json: string }>(
      referenceFullAnalyticsQuery(scope, runId, asOf),
    );
    const items = await q<{ item: string }>(jsonRowsQuery(scope, runId, asOf));
    expect(`[${items.map((r) => r.item).join(',')}]`).toBe(list);
    const [aggregates] = await q<Record<string, unknown>>(aggregatesQuery(scope, runId, asOf));
    expect(aggregates).toEqual(aggregateColumns);
    expect([aggregates]).toEqual(await q(referenceAggregatesQuery(scope, runId, asOf)));
    // The CSV export's list.
    expect(await q(trackerRowsQuery(scope, runId, asOf))).toEqual(
      await q<Record<string, unknown>>(referenceTrackerRowsQuery(scope, runId, asOf)),
    );
  }

  it(
    'for random write sequences and as_of values',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(opArb, { minLength: 1, maxLength: 12 }),
          fc.array(asOfArb, { minLength: 3, maxLength: 6 }),
          async (ops, asOfs) => {
            const trackers = await createTrackers();
            for (const op of ops) await apply(op, trackers);
            for (const a of asOfs) await expectSameAnswers(new Date(BASE + a.step * STEP_MS + a.ms));
            // …and at every entry's own timestamp (an entry at exactly as_of counts).
            const stamps = await m.db.query(
              `SELECT DISTINCT h.timestamp FROM tracker_status_history h JOIN trackers t ON t.id = h.tracker_id WHERE t.production_run_id = $1`,
              [runId],
            );
            for (const s of stamps.slice(0, 4)) await expectSameAnswers(new Date(s.timestamp));
          },
        ),
        { numRuns: RUNS },
      );
    },
    30_000 + RUNS * 1_500,
  );

  it('keeps one facts row per tracker with entries, equal to a recomputation', async () => {
    const trackers = await createTrackers();
    await apply(
      { kind: 'insert', entries: [{ tracker: 0, status: 'IN_STORAGE', step: 3, location: 0, source: 'manual' }] },
      trackers,
    );
    await apply(
      { kind: 'insert', entries: [{ tracker: 1, status: 'DELIVERED', step: 5, location: 1, source: 'geofence' }] },
      trackers,
    );
    await apply({ kind: 'deleteAutomatic', tracker: 1 }, trackers);
    const facts = () =>
      m.db.query(
        `SELECT f.* FROM tracker_journey_facts f JOIN trackers t ON t.id = f.tracker_id WHERE t.production_run_id = $1 ORDER BY f.tracker_id`,
        [runId],
      );
    const kept = await facts();
    expect(kept.map((f: { tracker_id: number }) => f.tracker_id)).toEqual([trackers[0]]);
    await m.db.query(`SELECT tracker_journey_facts_refresh($1::int[])`, [trackers]);
    expect(await facts()).toEqual(kept);
    // A truncate of the history empties the facts with it.
    await m.db.query(`TRUNCATE tracker_status_history`);
    expect(await m.db.query(`SELECT count(*)::int AS n FROM tracker_journey_facts`)).toEqual([{ n: 0 }]);
  });

  it('keeps each facts row on the run of its tracker, also when the run changes outside the API', async () => {
    const trackers = await createTrackers();
    await apply(
      { kind: 'insert', entries: [{ tracker: 0, status: 'IN_STORAGE', step: 3, location: 0, source: 'manual' }] },
      trackers,
    );
    const runOf = async () =>
      (await m.db.query(`SELECT production_run_id FROM tracker_journey_facts WHERE tracker_id = $1`, [trackers[0]]))[0]
        ?.production_run_id;
    expect(await runOf()).toBe(runId);
    const other = (await m.factories.run()).id;
    await m.db.query(`UPDATE trackers SET production_run_id = $2 WHERE id = $1`, [trackers[0], other]);
    expect(await runOf()).toBe(other);
    const asOf = new Date(BASE + 10 * STEP_MS);
    for (const run of [runId, other]) {
      expect(await q(trackerRowsQuery(scope, run, asOf))).toEqual(await q(referenceTrackerRowsQuery(scope, run, asOf)));
      expect(await q(aggregatesQuery(scope, run, asOf))).toEqual(await q(referenceAggregatesQuery(scope, run, asOf)));
    }
    await m.db.query(`UPDATE trackers SET production_run_id = $2 WHERE id = $1`, [trackers[0], runId]);
  });
});
