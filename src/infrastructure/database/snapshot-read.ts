import type { PoolClient } from 'pg';
import Cursor from 'pg-cursor';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { Sql } from './db.js';
import { queryInSnapshot } from './snapshot-companion.js';

/**
 * A consistent read on a dedicated connection: one REPEATABLE READ, READ ONLY transaction, so
 * every statement (and every streamed row) describes the same snapshot. `close()` must always be
 * called; it ends the transaction and hands the connection back, or discards it after a failure.
 */
export interface SnapshotRead {
  /** All rows of one statement. */
  query<T>(statement: Sql): Promise<T[]>;
  /**
   * A statement on a second connection in this read's snapshot, exported by it (pg_export_snapshot()
   * in one of its statements), beside the read's own: see queryInSnapshot. Null when no connection
   * is to spare (then run it here with `query` once the connection is free).
   */
  beside<T>(snapshotId: string, statement: Sql): Promise<T[] | null>;
  /**
   * The rows of `statement` in batches of `batchSize` from a server-side cursor, as arrays (no
   * object per row). The next batch is asked for before one is handed on, so the database produces
   * it while the consumer handles this one. One stream at a time per read.
   */
  stream<Row extends unknown[]>(statement: Sql, batchSize: number): AsyncGenerator<Row[], void>;
  close(): Promise<void>;
}

/**
 * Opens a SnapshotRead on a connection of `dataSource`'s pool (the cursor needs the driver's
 * connection itself, hence a pg client rather than `Db`). `settings` are SET LOCAL statements run
 * in the same round trip as BEGIN, and again on any companion connection; `timeoutMs` is the
 * read's statement timeout (a large answer to a slow client legitimately outlives the per-request one).
 */
export async function openSnapshotRead(
  dataSource: DataSource,
  options: { settings: string; timeoutMs: number },
): Promise<SnapshotRead> {
  const [client, release] = (await (dataSource.driver as PostgresDriver).obtainMasterConnection()) as [
    PoolClient,
    (err?: unknown) => void,
  ];
  let cursor: Cursor | null = null;
  let closed = false;
  // pg-pool drops its own 'error' listener while a client is checked out: a connection lost
  // between two reads (a cursor parked on a slow client) would be an uncaught 'error' event and
  // stop the process. Kept here instead. After a failed read or a lost connection nothing more is
  // said on it (a cursor close would wait forever for an answer) and it is discarded.
  let failed: unknown;
  let lost!: (error: Error) => void;
  const connectionLost = new Promise<never>((_, reject) => (lost = reject));
  connectionLost.catch(() => undefined);
  const onError = (error: Error) => {
    failed ??= error;
    lost(error);
  };
  client.on('error', onError);
  const settings = `SET LOCAL statement_timeout = ${Math.max(0, Math.floor(options.timeoutMs))}; ${options.settings}`;
  const read: SnapshotRead = {
    async query<T>(statement: Sql) {
      return (await client.query(statement.text, statement.values)).rows as T[];
    },
    beside: (snapshotId, statement) => queryInSnapshot(dataSource, snapshotId, settings, statement),
    async *stream<Row extends unknown[]>(statement: Sql, batchSize: number) {
      const own = client.query(new Cursor<Row>(statement.text, statement.values, { rowMode: 'array' }));
      cursor = own;
      const next = () =>
        own.read(batchSize).catch((error: unknown) => {
          failed ??= error;
          throw error;
        });
      let ahead = next();
      for (;;) {
        const batch = await ahead;
        if (batch.length === 0) return;
        ahead = next();
        ahead.catch(() => undefined);
        yield batch;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        if (!failed) {
          if (cursor) await Promise.race([cursor.close(), connectionLost]);
          await Promise.race([client.query('ROLLBACK'), connectionLost]);
        }
      } catch (error) {
        failed ??= error; // a connection that cannot end its transaction is discarded, not reused
      }
      client.removeListener('error', onError);
      release(failed);
    },
  };
  try {
    await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${settings}`);
  } catch (error) {
    await read.close();
    throw error;
  }
  return read;
}
