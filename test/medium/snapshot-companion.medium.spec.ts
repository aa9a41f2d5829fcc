import type { PoolClient } from 'pg';
import { pgPool } from '../../src/infrastructure/database/database-pool.js';
import { sql } from '../../src/infrastructure/database/db.js';
import { queryInSnapshot } from '../../src/infrastructure/database/snapshot-companion.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * queryInSnapshot: a second connection reads exactly the exporting transaction's snapshot, and a
 * reader that finds no spare connection is told so at once (it then runs the statement itself).
 */
describe('queryInSnapshot', () => {
  let m: MediumContext;

  beforeAll(async () => {
    m = await createMediumContext({ factories: false, env: { DB_POOL_SIZE: '3' } });
    await m.db.query(`CREATE TABLE snapshot_probe (n int)`);
    await m.db.query(`INSERT INTO snapshot_probe VALUES (1)`);
  });
  afterAll(async () => m?.close());

  async function exporting(): Promise<{ client: PoolClient; snapshot: string }> {
    const client = await pgPool(m.db).connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const snapshot = (await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows[0].id;
    return { client, snapshot };
  }

  it('reads the exported snapshot, not what committed after it', async () => {
    const { client, snapshot } = await exporting();
    try {
      await m.db.query(`INSERT INTO snapshot_probe VALUES (2)`);
      const rows = await queryInSnapshot<{ n: number }>(
        m.db,
        snapshot,
        'SET LOCAL work_mem = 4096',
        sql`SELECT n FROM snapshot_probe ORDER BY n`,
      );
      expect(rows).toEqual([{ n: 1 }]);
      expect((await m.db.query(`SELECT count(*)::int AS c FROM snapshot_probe`))[0].c).toBe(2);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('answers null without waiting when the pool has no connection to spare, and fails with the statement', async () => {
    const { client, snapshot } = await exporting();
    const held = [await pgPool(m.db).connect(), await pgPool(m.db).connect()];
    try {
      const started = performance.now();
      expect(await queryInSnapshot(m.db, snapshot, 'SET LOCAL work_mem = 4096', sql`SELECT 1`)).toBeNull();
      expect(performance.now() - started).toBeLessThan(1000);
      held.pop()!.release();
      await expect(queryInSnapshot(m.db, snapshot, 'SET LOCAL work_mem = 4096', sql`SELECT 1/0`)).rejects.toThrow(
        /division by zero/,
      );
      // The failed connection was discarded, not handed back mid-transaction (its replacement may
      // take longer than the reader's short wait to connect on a loaded machine: ask until it is there).
      let answer: { one: number }[] | null = null;
      for (let i = 0; i < 100 && answer === null; i++) {
        answer = await queryInSnapshot<{ one: number }>(
          m.db,
          snapshot,
          'SET LOCAL work_mem = 4096',
          sql`SELECT 1 AS one`,
        );
        if (answer === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(answer).toEqual([{ one: 1 }]);
    } finally {
      for (const c of held) c.release();
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
