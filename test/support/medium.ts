import 'reflect-metadata';
import {
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type ModuleMetadata,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AuthModule } from '../../src/auth/auth.module.js';
import { TokenService } from '../../src/auth/token.service.js';
import { BrandsModule } from '../../src/brands/brands.module.js';
import { ClientsModule } from '../../src/clients/clients.module.js';
import type { AppConfig } from '../../src/common/config/app-config.js';
import { AppConfigModule } from '../../src/common/config/config.module.js';
import { CacheModule } from '../../src/infrastructure/cache/cache.module.js';
import { DatabaseModule } from '../../src/infrastructure/database/database.module.js';
import { MetricsModule } from '../../src/metrics/metrics.module.js';
import { ProductionRunsModule } from '../../src/production-runs/production-runs.module.js';
import { PlacesModule } from '../../src/places/places.module.js';
import { redisAvailable } from './app.js';
import { createTestDatabase, dropTestDatabase } from './database.js';
import { testConfig } from './test-config.js';
import { Factories } from './factories.js';

/**
 * The medium tier: services and repositories wired by Nest against a real cloned database, with no
 * HTTP server, no filters and no pipes. A test names the feature modules it exercises; the
 * infrastructure (config, database, cache, metrics sink) is always there.
 */

export interface MediumOptions {
  /** Feature modules under test (e.g. LocationsModule). */
  imports?: NonNullable<ModuleMetadata['imports']>;
  /** Extra environment for the config (e.g. { USING_PGBOUNCER: 'true' }). */
  env?: Record<string, string | undefined>;
  /** Use REDIS_URL from the environment (default true when it is set). */
  redis?: boolean;
  /**
   * Mount the modules the test-data builders write through (users, tokens, clients, brands, runs,
   * storage and delivery locations). Default true; false boots only infrastructure + `imports`.
   */
  factories?: boolean;
  /** Reuse the database of another context (two instances sharing state); it stays when this one closes. */
  database?: string;
  /** Share the cache prefix of another context (two instances sharing Redis). */
  cachePrefix?: string;
}

export interface MediumContext {
  ctx: INestApplicationContext;
  config: AppConfig;
  database: string;
  db: DataSource;
  /** A provider from any mounted module. */
  get<T>(token: Type<T>): T;
  /** Present when `factories` was not turned off. */
  factories: Factories;
  close(): Promise<void>;
}

@Module({})
class MediumRootModule {}

/** Modules the builders in test/support/factories.ts resolve their repositories and tokens from. */
const FACTORY_MODULES = [AuthModule, ClientsModule, BrandsModule, ProductionRunsModule, PlacesModule];

export async function createMediumContext(options: MediumOptions = {}): Promise<MediumContext> {
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'tps-medium-'));
  const useRedis = options.redis ?? redisAvailable;
  const config = testConfig({ database, dataDir, redis: useRedis, cachePrefix: options.cachePrefix, env: options.env });
  const withFactories = options.factories ?? true;
  // MetricsModule is global: services report counters into it (e.g. ingestion), so it is always mounted.
  const root: DynamicModule = {
    module: MediumRootModule,
    imports: [
      AppConfigModule.forRoot(config),
      DatabaseModule,
      CacheModule,
      MetricsModule,
      ...(withFactories ? FACTORY_MODULES : []),
      ...(options.imports ?? []),
    ],
  };
  let ctx: INestApplicationContext;
  try {
    ctx = await NestFactory.createApplicationContext(root, { logger: false, abortOnError: false });
    await ctx.init();
  } catch (error) {
    if (ownsDatabase) await dropTestDatabase(database);
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const db = ctx.get(DataSource);
  return {
    ctx,
    config,
    database,
    db,
    get: (token) => ctx.get(token),
    get factories(): Factories {
      if (!withFactories) throw new Error('createMediumContext({ factories: false }) has no factories');
      return new Factories(ctx, db, ctx.get(TokenService));
    },
    async close() {
      await ctx.close();
      if (ownsDatabase) await dropTestDatabase(database);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
