import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel.js';
import sql, { join, raw, type Sql } from 'sql-template-tag';

export { empty, join, raw, Sql } from 'sql-template-tag';
export { sql };

/** One page of a list and the number of rows over all pages. */
export interface PagedRows<T> {
  rows: T[];
  total: number;
}

/** The parts of a paged list query: `SELECT columns FROM from WHERE where ORDER BY orderBy`. */
export interface PagedQuery {
  columns: Sql;
  from: Sql;
  /** Conditions joined with AND; an empty list means every row. */
  where: readonly Sql[];
  orderBy: Sql;
}

/** `a AND b AND …` (TRUE for none), for composing WHERE clauses out of fragments. */
export function and(conditions: readonly Sql[]): Sql {
  return conditions.length === 0 ? raw('TRUE') : join(conditions.map((c) => sql`(${c})`), ' AND ');
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
 */
@Injectable()
export class Db {
  private readonly current = new AsyncLocalStorage<QueryRunner>();

  constructor(private readonly dataSource: DataSource) {}

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

  /** Rows the statement inserted, updated or deleted. */
  async execute(statement: Sql): Promise<number> {
    return (await this.run(statement)).affected ?? 0;
  }

  /** A page of `query` and its total, as two statements run side by side. */
  async page<T>(query: PagedQuery, page: { skip: number; limit: number }): Promise<PagedRows<T>> {
    const where = and(query.where);
    const [rows, count] = await Promise.all([
      this.rows<T>(sql`SELECT ${query.columns} FROM ${query.from} WHERE ${where} ORDER BY ${query.orderBy} LIMIT ${page.limit} OFFSET ${page.skip}`),
      this.one<{ total: number }>(sql`SELECT count(*)::int AS total FROM ${query.from} WHERE ${where}`),
    ]);
    return { rows, total: count.total };
  }

  /**
   * Runs `work` in one transaction (joining the caller's when there is one). Without `isolation`
   * the transaction has the database's default level (READ COMMITTED) and costs no extra statement
   * to set it: hot paths (an ingest batch, every analytics statement) open one per request.
   */
  transaction<T>(work: () => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    if (this.current.getStore()) return work();
    const run = (manager: EntityManager) => this.current.run(manager.queryRunner as QueryRunner, work);
    return isolation ? this.dataSource.transaction(isolation, run) : this.dataSource.transaction(run);
  }

  /** Whether the caller runs inside `transaction`. */
  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  private async run(statement: Sql) {
    const inTransaction = this.current.getStore();
    if (inTransaction) return inTransaction.query(statement.text, statement.values, true);
    const runner = this.dataSource.createQueryRunner();
    try {
      return await runner.query(statement.text, statement.values, true);
    } finally {
      await runner.release();
    }
  }
}
