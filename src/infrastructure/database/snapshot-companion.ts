import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { pgPool } from './database-pool.js';
import type { Sql } from './db.js';

/** Longest a reader waits for a spare connection before running the statement itself. */
const SPARE_CONNECTION_WAIT_MS = 20;

/**
 * Runs one statement of a consistent read on a second connection, side by side with the reader's
 * own: inside `snapshotId` (exported by the reader's REPEATABLE READ transaction with
 * pg_export_snapshot(), on the same server), READ ONLY, after `settings`. Resolves with the rows, or
 * with null — having spent no database time — when no connection of the pool is to spare: the
 * reader then runs the statement on its own connection. A reader holding one connection never
 * waits long for a second, so readers cannot starve each other of connections.
 *
 * Failures of the statement reject; the connection is released (discarded after a failure) in
 * every case, also when the reader has given up meanwhile.
 */
export async function queryInSnapshot<T>(
  dataSource: DataSource,
  snapshotId: string,
  settings: string,
  statement: Sql,
): Promise<T[] | null> {
  const pool = pgPool(dataSource);
  if (pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10)) return null;
  const client = await spareConnection(pool);
  if (!client) return null;
  let failure: unknown;
  // pg-pool drops its own 'error' listener while a client is checked out: a connection lost
  // between two statements would otherwise be an uncaught 'error' event. Noted here; the next
  // statement then fails, and the connection is discarded.
  const onError = (error: Error) => void (failure ??= error);
  client.on('error', onError);
  try {
    // One round trip: the snapshot must be set before the transaction's first query.
    await client.query(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '${snapshotId.replace(/'/g, "''")}'; ${settings}`,
    );
    const result = await client.query(statement.text, statement.values);
    await client.query('ROLLBACK');
    return result.rows as T[];
  } catch (error) {
    failure ??= error;
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(failure !== undefined);
  }
}

/** A connection of the pool within SPARE_CONNECTION_WAIT_MS, or null (one arriving later is released). */
async function spareConnection(pool: pg.Pool): Promise<pg.PoolClient | null> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), SPARE_CONNECTION_WAIT_MS)));
  const winner = await Promise.race([connecting.catch(() => null), late]);
  clearTimeout(timer);
  if (winner === null)
    void connecting.then(
      (client) => client.release(),
      () => undefined,
    );
  return winner;
}
