import fc from 'fast-check';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * Property: after every statement, each tracker's journey-facts row is byte for byte (its row text:
 * float, array and JSON text included) the row that recomputing the tracker from all its entries
 * writes — whether the statement's entries were appended (the incremental path: later timestamps,
 * the same timestamp as the last entry, several per tracker), back-dated, mixed across trackers in
 * one statement, or followed other writes (deleting the last entry, moving an entry, renaming a
 * storage location). Timestamps carry microseconds, so epochs and sums are inexact decimals in float8.
 * ANALYTICS_PROPERTY_RUNS raises the number of cases.
 */

const RUNS = Number(process.env.ANALYTICS_PROPERTY_RUNS ?? 25);
const BASE = Date.parse('2026-01-01T00:00:00Z');
const STEP_MS = 432_000;
const STATUSES = ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'] as const;
const TRACKERS = 4;

interface EntrySpec {
  tracker: number;
  status: (typeof STATUSES)[number];
  /**
   * same: at the tracker's last timestamp (a greater id); lowId: the same with a lower id (sorts
   * before the last entry); after: later by `steps` and `us`; back: at BASE + steps.
   */
  when: 'same' | 'lowId' | 'after' | 'back';
  steps: number;
  /** Microseconds after the steps (the automation writes microsecond timestamps). */
  us: number;
  location: number;
}
type Op =
  | { kind: 'insert'; entries: EntrySpec[] }
  | { kind: 'deleteLast'; tracker: number }
  | { kind: 'replaceLast'; tracker: number; steps: number }
  | { kind: 'move'; tracker: number; steps: number }
  | { kind: 'rename'; location: number };

const entryArb: fc.Arbitrary<EntrySpec> = fc.record({
  tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
  status: fc.constantFrom(...STATUSES, 'IN_STORAGE' as const),
  when: fc.constantFrom('same', 'lowId', 'after', 'after', 'after', 'after', 'after', 'back'),
  steps: fc.integer({ min: 0, max: 30 }),
  us: fc.oneof(fc.constantFrom(0, 1, 1_000, 215_999_000), fc.integer({ min: 0, max: 999_999 })),
  location: fc.integer({ min: 0, max: 2 }),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      entries: fc.array(entryArb, { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteLast' as const),
      tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('replaceLast' as const),
      tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
      steps: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('move' as const),
      tracker: fc.integer({ min: 0, max: TRACKERS - 1 }),
      steps: fc.integer({ min: 0, max: 30 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('rename' as const), location: fc.integer({ min: 0, max: 1 }) }),
  },
);

describe('journey facts kept incrementally equal a recomputation (property)', () => {
  let m: MediumContext;
  let runId: number;
  let storage: number[];
  let delivery: number[];
  let lowIds = 0;

  beforeAll(async () => {
    m = await createMediumContext();
    runId = (await m.factories.run()).id;
    storage = [
      (await m.factories.storageLocation('North "cold" \\ é')).id,
      (await m.factories.storageLocation('South')).id,
    ];
    delivery = [
      (await m.factories.deliveryLocation('Berlin')).id,
      (await m.factories.deliveryLocation('Amsterdam')).id,
    ];
  });
  afterAll(async () => m?.close());

  async function createTrackers(): Promise<number[]> {
    await m.db.query(`DELETE FROM trackers WHERE production_run_id = $1`, [runId]);
    const rows = await m.db.query(
      `INSERT INTO trackers (name, production_run_id, status, created_at, updated_at)
       SELECT '=A' || i, $1, 'CREATED', $2, $2 FROM generate_series(1, $3) i RETURNING id`,
      [runId, new Date(BASE).toISOString(), TRACKERS],
    );
    return rows.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b);
  }

  /** Each tracker's last entry timestamp in microseconds (BASE when it has none). */
  async function lastTimes(trackers: number[]): Promise<number[]> {
    const rows: { tracker_id: number; last: string }[] = await m.db.query(
      `SELECT tracker_id, (extract(epoch FROM max(timestamp)) * 1000000)::bigint::text AS last
         FROM tracker_status_history WHERE tracker_id = ANY($1) GROUP BY tracker_id`,
      [trackers],
    );
    return trackers.map((t) => Number(rows.find((r) => r.tracker_id === t)?.last ?? BASE * 1000));
  }
  const iso = (us: number) =>
    new Date(Math.floor(us / 1000)).toISOString().replace('Z', `${String(us % 1000).padStart(3, '0')}Z`);

  async function apply(op: Op, trackers: number[]): Promise<void> {
    switch (op.kind) {
      case 'insert': {
        const last = await lastTimes(trackers);
        const rows = op.entries.map((e) => {
          const at =
            e.when === 'back'
              ? (BASE + e.steps * STEP_MS) * 1000
              : last[e.tracker] + (e.when === 'after' ? e.steps * STEP_MS * 1000 + e.us : 0);
          if (e.when !== 'back') last[e.tracker] = at;
          return [
            e.when === 'lowId' ? -++lowIds : null,
            trackers[e.tracker],
            e.status,
            iso(at),
            e.status === 'IN_STORAGE' && e.location < 2 ? storage[e.location] : null,
            e.status === 'DELIVERED' && e.location < 2 ? delivery[e.location] : null,
          ] as const;
        });
        await m.db.query(
          `INSERT INTO tracker_status_history (id, tracker_id, status, timestamp, storage_location_id, delivery_location_id, source)
           SELECT COALESCE(id, nextval(pg_get_serial_sequence('tracker_status_history', 'id'))), t, s, ts, sl, dl, 'geofence'
             FROM unnest($1::bigint[], $2::int[], $3::text[], $4::timestamptz[], $5::int[], $6::int[]) AS u(id, t, s, ts, sl, dl)`,
          [0, 1, 2, 3, 4, 5].map((i) => rows.map((r) => r[i])),
        );
        return;
      }
      case 'deleteLast':
        await m.db.query(
          `DELETE FROM tracker_status_history WHERE id = (SELECT id FROM tracker_status_history WHERE tracker_id = $1 ORDER BY timestamp DESC, id DESC LIMIT 1)`,
          [trackers[op.tracker]],
        );
        return;
      case 'replaceLast':
        // One statement deleting the last entry and appending after it: both triggers fire at its end.
        await m.db.query(
          `WITH gone AS (
             DELETE FROM tracker_status_history WHERE id = (SELECT id FROM tracker_status_history WHERE tracker_id = $1 ORDER BY timestamp DESC, id DESC LIMIT 1)
             RETURNING tracker_id, timestamp)
           INSERT INTO tracker_status_history (tracker_id, status, timestamp, source)
           SELECT tracker_id, 'IN_TRANSIT', timestamp + $2 * interval '1 millisecond', 'geofence' FROM gone`,
          [trackers[op.tracker], op.steps * STEP_MS],
        );
        return;
      case 'move':
        await m.db.query(
          `UPDATE tracker_status_history SET timestamp = $2 WHERE id = (SELECT min(id) FROM tracker_status_history WHERE tracker_id = $1)`,
          [trackers[op.tracker], new Date(BASE + op.steps * STEP_MS + 1).toISOString()],
        );
        return;
      case 'rename':
        await m.db.query(`UPDATE storage_locations SET name = name || $2 WHERE id = $1`, [
          storage[op.location],
          `,${op.location}`,
        ]);
        return;
    }
  }

  const FACTS = `SELECT f::text AS row FROM tracker_journey_facts f WHERE f.tracker_id = ANY($1) ORDER BY f.tracker_id`;

  /** The rows a recomputation from all entries writes, rolled back. */
  async function recomputed(trackers: number[]): Promise<string[]> {
    const runner = m.db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(`DELETE FROM tracker_journey_facts WHERE tracker_id = ANY($1)`, [trackers]);
      await runner.query(`SELECT tracker_journey_facts_refresh($1::int[])`, [trackers]);
      return (await runner.query(FACTS, [trackers])).map((r: { row: string }) => r.row);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  it(
    'after every statement of random write sequences',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
          const trackers = await createTrackers();
          for (const op of ops) {
            await apply(op, trackers);
            const kept = (await m.db.query(FACTS, [trackers])).map((r: { row: string }) => r.row);
            expect(kept).toEqual(await recomputed(trackers));
          }
        }),
        { numRuns: RUNS },
      );
    },
    30_000 + RUNS * 2_000,
  );

  it('closes a storage visit at a next entry with the same timestamp (zero seconds)', async () => {
    const [tracker] = await createTrackers();
    await apply(
      {
        kind: 'insert',
        entries: [{ tracker: 0, status: 'IN_STORAGE', when: 'after', steps: 1, us: 5_000, location: 0 }],
      },
      [tracker],
    );
    await apply(
      { kind: 'insert', entries: [{ tracker: 0, status: 'IN_TRANSIT', when: 'same', steps: 0, us: 0, location: 0 }] },
      [tracker],
    );
    const [{ name }] = await m.db.query(`SELECT name FROM storage_locations WHERE id = $1`, [storage[0]]);
    const [row] = await m.db.query(
      `SELECT visit_count, closed_visit_seconds, visits_json, last_status FROM tracker_journey_facts WHERE tracker_id = $1`,
      [tracker],
    );
    expect(row).toEqual({
      visit_count: 1,
      closed_visit_seconds: [0],
      visits_json: `{"storage_location_id":${storage[0]},"location_name":${JSON.stringify(name)},"arrived_at":"2026-01-01T00:07:12.005Z","departed_at":"2026-01-01T00:07:12.005Z","duration_days":0}`,
      last_status: 'IN_TRANSIT',
    });
  });
});
