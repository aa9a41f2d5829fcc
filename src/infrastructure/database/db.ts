import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel.js';
import sql, { join, raw, type Sql } from 'sql-template-tag';
import { ReadReplicas } from './read-replicas.js';

export { empty, join, raw, Sql } from 'sql-template-tag';
export { sql };

/** One page of a list and the number of rows over all pages. */
export interface PagedRows<T> {
  rows: T[];
  total: number;
}

/** The parts of a paged list query: `SELECT columns FROM from WHERE where ORDER BY orderBy`. */
interface PagedQuery {
  columns: Sql;
  from: Sql;
  /** Conditions joined with AND; an empty list means every row. */
  where: readonly Sql[];
  orderBy: Sql;
  /**
   * The FROM of the total when joins in `from` only add columns (every row has its joined row): a
   * count over the driving table alone can stay index-only. Default: `from`.
   */
  countFrom?: Sql;
}

/** `a AND b AND …` (TRUE for none), for composing WHERE clauses out of fragments. */
export function and(conditions: readonly Sql[]): Sql {
  return conditions.length === 0
    ? raw('TRUE')
    : join(
        conditions.map((c) => sql`(${c})`),
        ' AND ',
      );
}

type QueryResult = Awaited<ReturnType<QueryRunner['query']>>;

/** The read methods, over whatever runs a statement (the primary, or a lag-tolerant route). */
abstract class Reads {
  protected abstract run(statement: Sql): Promise<QueryResult>;

  /** Every row the statement returns. */
  async rows<T>(statement: Sql): Promise<T[]> {
    return (await this.run(statement)).records as T[];
  }

  /** The first row, or null when there is none. */
  async first<T>(statement: Sql): Promise<T | null> {
    return ((await this.run(statement)).records[0] as T | undefined) ?? null;
  }

  /** The first row of a statement that always returns one (an aggregate, `RETURNING` of an insert). */
  async one<T>(statement: Sql): Promise<T> {
    const row = await this.first<T>(statement);
    if (row === null) throw new Error('statement returned no row');
    return row;
  }

  /** A page of `query` and its total, as two statements run side by side. */
  async page<T>(query: PagedQuery, page: { skip: number; limit: number }): Promise<PagedRows<T>> {
    const where = and(query.where);
    const [rows, count] = await Promise.all([
      this.rows<T>(
        sql`SELECT ${query.columns} FROM ${query.from} WHERE ${where} ORDER BY ${query.orderBy} LIMIT ${page.limit} OFFSET ${page.skip}`,
      ),
      this.one<{ total: number }>(
        sql`SELECT count(*)::int AS total FROM ${query.countFrom ?? query.from} WHERE ${where}`,
      ),
    ]);
    return { rows, total: count.total };
  }
}

/**
 * Reads that tolerate lag (`db.replica`): served by a streaming replica that is at most
 * READ_REPLICA_MAX_LAG_MS behind, else by the primary (ReadReplicas decides, from its background
 * measurements). Inside a transaction they run on that transaction's connection like any other
 * statement, so a read that must see the caller's own write can always get it.
 */
class LagTolerantReads extends Reads {
  constructor(
    private readonly db: Db,
    private readonly replicas: ReadReplicas | undefined,
  ) {
    super();
  }

  /**
   * Runs `work` in one transaction on a replica (or on the primary, as `Db.transaction`, when none
   * is available or the replica fails). `work` must only read: it may run twice, and a replica
   * refuses writes.
   */
  transaction<T>(work: () => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    if (this.db.inTransaction || !this.replicas) return this.db.transaction(work, isolation);
    return this.replicas.route(
      (replica) => this.db.transactionOn(replica, work, isolation),
      () => this.db.transaction(work, isolation),
    );
  }

  protected run(statement: Sql): Promise<QueryResult> {
    if (this.db.inTransaction || !this.replicas) return this.db.statement(statement);
    return this.replicas.route(
      (replica) => runOn(replica, statement),
      () => this.db.statement(statement),
    );
  }
}

/**
 * The one database handle of repositories. Statements are `sql` tagged templates, so a value is
 * always a parameter and fragments (the access scope, filters) compose without numbering
 * placeholders by hand.
 *
 * Transactions are carried implicitly: inside `transaction(work)` every statement of `work`, in
 * any repository, runs on that transaction's connection (AsyncLocalStorage); outside one each
 * statement takes a pooled connection. A nested `transaction` joins the outer one. Repository
 * methods therefore never take a handle argument.
 *
 * Statements run on the primary. A repository opts a read into a replica per query with
 * `db.replica.rows(…)` (or `first`, `one`, `page`, `transaction`): the intent is the
 * repository's, the connection is chosen here.
 */
@Injectable()
export class Db extends Reads {
  private readonly current = new AsyncLocalStorage<QueryRunner>();
  /** Reads that tolerate lag (see LagTolerantReads). */
  readonly replica: LagTolerantReads;

  constructor(
    private readonly dataSource: DataSource,
    @Optional() replicas?: ReadReplicas,
  ) {
    super();
    this.replica = new LagTolerantReads(this, replicas);
  }

  /** Rows the statement inserted, updated or deleted. */
  async execute(statement: Sql): Promise<number> {
    return (await this.run(statement)).affected ?? 0;
  }

  /**
   * Runs `work` in one transaction (joining the caller's when there is one). Without `isolation`
   * the transaction has the database's default level (READ COMMITTED) and costs no extra statement
   * to set it: hot paths (an ingest batch, every analytics statement) open one per request.
   */
  transaction<T>(work: () => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    if (this.current.getStore()) return work();
    return this.transactionOn(this.dataSource, work, isolation);
  }

  /** A transaction on `dataSource` (the primary's, or a replica's for LagTolerantReads) carrying `work`. */
  transactionOn<T>(dataSource: DataSource, work: () => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    const run = (manager: EntityManager) => this.current.run(manager.queryRunner as QueryRunner, work);
    return isolation ? dataSource.transaction(isolation, run) : dataSource.transaction(run);
  }

  /** Whether the caller runs inside `transaction`. */
  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  /** Runs a statement on the caller's transaction, else on a pooled primary connection. */
  statement(statement: Sql): Promise<QueryResult> {
    const inTransaction = this.current.getStore();
    if (inTransaction) return inTransaction.query(statement.text, statement.values, true);
    return runOn(this.dataSource, statement);
  }

  protected run(statement: Sql): Promise<QueryResult> {
    return this.statement(statement);
  }
}

async function runOn(dataSource: DataSource, statement: Sql): Promise<QueryResult> {
  const runner = dataSource.createQueryRunner();
  try {
    return await runner.query(statement.text, statement.values, true);
  } finally {
    await runner.release();
  }
}
