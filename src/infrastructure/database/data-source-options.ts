import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations/index.js';
import type { AppConfig } from '../../common/config/app-config.js';

/**
 * One place that turns config into TypeORM/pg settings, used by the app, the CLI, the
 * migration scripts and the test harness. Migrations own the schema (never `synchronize`), and
 * no entities are registered: repositories write SQL, and the schema's TypeScript description is
 * generated from the migrated database (schema.ts).
 */
export function dataSourceOptions(config: AppConfig, url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    poolSize: config.dbPoolSize,
    extra: {
      max: config.dbPoolSize,
      connectionTimeoutMillis: config.dbConnectionTimeoutMs,
      idleTimeoutMillis: 30_000,
      statement_timeout: config.dbStatementTimeoutMs,
      idle_in_transaction_session_timeout: 60_000,
      application_name: 'tracker-pipeline',
      // Read by the location_history view (the cutoff between hourly and daily history). PgBouncer in transaction mode drops
      // startup options, so the view falls back to the default of 7 days there.
      options: config.usingPgbouncer
        ? undefined
        : `-c app.hourly_history_days=${config.hourlyHistoryDays} -c timezone=UTC`,
    },
  };
}
