import { AccessScope } from '../../src/common/auth/access-scope.js';
import { Db, sql } from '../../src/infrastructure/database/db.js';
import { TrackerBulkRepository } from '../../src/trackers/tracker-bulk.repository.js';
import { TrackersModule } from '../../src/trackers/trackers.module.js';
import { INSERT_CHUNK } from '../../src/trackers/trackers.rows.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * A bulk load of trackers (CSV import, demo data) into a database whose journey-facts statistics
 * are those of an empty table. The status-entry trigger's statements are planned once per
 * connection; planned while the table was empty, they joined every later chunk's trackers to the
 * whole table per tracker (quadratic: 13 s for a 10 000-row chunk once 10 000 trackers existed, a
 * 100 000-row import over a minute). How many facts rows the load read, by any scan
 * (pg_stat_user_tables), shows which plan ran.
 */
describe('bulk tracker loads with the journey-facts statistics of an empty table', () => {
  let m: MediumContext;

  beforeAll(async () => {
    m = await createMediumContext({ imports: [TrackersModule] });
  });
  afterAll(async () => m?.close());

  /** Facts rows read so far by sequential and index scans (the counters are flushed first). */
  async function factsRowsRead(): Promise<number> {
    const runner = m.db.createQueryRunner();
    try {
      await runner.query('SELECT pg_stat_clear_snapshot()');
      const [row] = await runner.query(
        `SELECT (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::float8 AS n FROM pg_stat_user_tables WHERE relname = 'tracker_journey_facts'`,
      );
      return row.n;
    } finally {
      await runner.release();
    }
  }

  it('a load of more than one chunk reads each facts row a bounded number of times', async () => {
    const run = await m.factories.run();
    await m.db.query('ALTER TABLE tracker_journey_facts SET (autovacuum_enabled = false)');
    await m.db.query('ANALYZE tracker_journey_facts');
    const count = INSERT_CHUNK + 2000;
    const trackers = Array.from({ length: count }, (_, i) => ({
      name: `bulk-plan-${i}`,
      productionRunId: run.id,
      status: 'CREATED' as const,
      storageLocationId: null,
      deliveryLocationId: null,
      notes: null,
    }));
    const db = m.get(Db);
    const before = await factsRowsRead();
    // One transaction: every chunk on the same connection, as an import runs.
    const inserted = await db.transaction(async () => {
      const n = await m.get(TrackerBulkRepository).insertMany(AccessScope.admin(), trackers, null, 'import');
      await db.execute(sql`SELECT pg_stat_force_next_flush()`);
      return n;
    });
    expect(inserted).toBe(count);
    // The counters reach the shared statistics when the loading connection goes idle after its commit.
    let read = (await factsRowsRead()) - before;
    for (let again = 0; again < 20; again++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const now = (await factsRowsRead()) - before;
      if (now === read && read > 0) break;
      read = now;
    }
    expect(read).toBeLessThan(10 * count);
    const [facts] = await m.db.query(
      `SELECT count(*)::int AS n FROM tracker_journey_facts f JOIN trackers t ON t.id = f.tracker_id WHERE t.production_run_id = $1`,
      [run.id],
    );
    expect(facts.n).toBe(count);
  });
});
