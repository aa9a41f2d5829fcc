import { Inject, Injectable, Optional } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { pgPool } from './database-pool.js';
import type { Sql } from './db.js';
import { ReadReplicas } from './read-replicas.js';

/** Distinct statement texts kept named per process; beyond this, queries run unnamed (still correct). */
const MAX_NAMED_STATEMENTS = 1000;

/**
 * Hot, frequent reads (the user row behind every authenticated request, history pages) as named
 * prepared statements: each pooled connection parses and plans the text once and then only binds
 * parameters, instead of re-planning every time (planning is a large share of a history page's
 * cost).
 *
 * Same pool, guard and timeouts as every other query; errors are TypeORM's QueryFailedError like
 * DataSource.query's, so the exception filter treats them alike. Behind PgBouncer in transaction
 * mode (USING_PGBOUNCER) a named statement may land on a server connection that never saw it, so
 * there queries run unnamed.
 */
@Injectable()
export class PreparedQueries {
  private readonly names = new Map<string, string>();

  /** Reads that tolerate lag, on a replica's pool when one is available (see Db.replica). */
  readonly replica = {
    /**
     * With `emptyAsksPrimary`, no row from a replica is checked on the primary: for statements whose
     * empty answer means "not found", so a row created a moment ago is not a 404 while it replicates.
     */
    rows: async <T>(statement: Sql, options: { emptyAsksPrimary?: boolean } = {}): Promise<T[]> => {
      if (!this.replicas) return this.rows<T>(statement);
      const rows = await this.replicas.route(
        async (replica) => {
          const found = await this.rowsOn<T>(replica, statement);
          return found.length === 0 && options.emptyAsksPrimary ? null : found;
        },
        () => this.rows<T>(statement),
      );
      return rows ?? this.rows<T>(statement);
    },
  };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly replicas?: ReadReplicas,
  ) {}

  /** Rows of a `sql` statement, run as a named prepared statement on the pool. */
  rows<T>(statement: Sql): Promise<T[]> {
    return this.rowsOn<T>(this.dataSource, statement);
  }

  private async rowsOn<T>(dataSource: DataSource, statement: Sql): Promise<T[]> {
    const { text, values } = statement;
    try {
      const result = await pgPool(dataSource).query({ name: this.nameOf(text), text, values });
      return result.rows as T[];
    } catch (error) {
      throw new QueryFailedError(text, values, error as Error);
    }
  }

  private nameOf(text: string): string | undefined {
    if (this.config.usingPgbouncer) return undefined;
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMED_STATEMENTS) {
      name = `q_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      this.names.set(text, name);
    }
    return name;
  }
}
