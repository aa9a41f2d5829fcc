import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseGuard } from './database-guard.js';
import { DatabasePool } from './database-pool.js';
import { Db } from './db.js';
import { PreparedQueries } from './prepared-queries.js';
import { ReadReplicas } from './read-replicas.js';

/** TypeORM on `pg`. Migrations run at start (never synchronize). The URL is resolved in main.ts. */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (!config.databaseUrl) throw new Error('DATABASE_URL was not resolved before boot');
        return {
          ...dataSourceOptions(config, config.databaseUrl),
          migrationsRun: true,
          retryAttempts: 3,
          retryDelay: 1000,
        };
      },
    }),
  ],
  providers: [Db, DatabasePool, DatabaseGuard, PreparedQueries, ReadReplicas],
  exports: [Db, DatabasePool, DatabaseGuard, PreparedQueries, ReadReplicas],
})
export class DatabaseModule {}
