import 'reflect-metadata';
import { Module, type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { ExpressHttpAdapter } from '../../src/infrastructure/http/express-http-adapter.js';
import { TokenService } from '../../src/auth/token.service.js';
import type { Role } from '../../src/common/auth/roles.js';
import type { AppConfig } from '../../src/common/config/app-config.js';
import { createTestDatabase, dropTestDatabase } from './database.js';
import { Factories, type CreatedUser } from './factories.js';
import { ResponseChecker } from './openapi-responses.js';

import { testConfig } from './test-config.js';

export { TEST_JWT_SECRET } from './test-config.js';

export interface TestAppOptions {
  /** Extra environment for this app (e.g. { HOURLY_HISTORY_DAYS: '3' }). */
  env?: Record<string, string | undefined>;
  /** Use REDIS_URL from the environment (default true when it is set). */
  redis?: boolean;
  /** Reuse a database created by another TestApp (two instances sharing state). */
  database?: string;
  /** Share the cache prefix of another app (two instances sharing Redis). */
  cachePrefix?: string;
  /** Connect through this URL instead of the database's own, e.g. a fault proxy in front of `database`. */
  databaseUrlOverride?: string;
  /**
   * Check every JSON response against the OpenAPI document (default true). Turn off only for an
   * app that answers off the document on purpose, and say why beside the call.
   */
  checkResponses?: boolean;
  /** Extra modules mounted beside AppModule (test-only controllers, e.g. test/support/reliability.ts). */
  imports?: NonNullable<ModuleMetadata['imports']>;
}

@Module({})
class TestRootModule {}

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  database: string;
  db: DataSource;
  /** supertest bound to this app's HTTP server. */
  http: () => ReturnType<typeof request>;
  factories: Factories;
  tokenFor(userId: number): string;
  /** What the app's JSON responses did against the OpenAPI document (see openapi-responses.ts). */
  responses: ResponseChecker;
  close(): Promise<void>;
}

/** Env of a test app with geofence automation on (it is off in test apps unless asked for). */
export const GEOFENCE_ON = { GEOFENCE_ENABLED: 'true' } as const;

export const redisAvailable = Boolean(process.env.REDIS_URL);

/** Boots the real application (all modules, filters, pipes) against a fresh cloned database. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'tps-test-'));
  const useRedis = options.redis ?? redisAvailable;
  const config = testConfig({
    database,
    dataDir,
    redis: useRedis,
    cachePrefix: options.cachePrefix,
    env: options.env,
    databaseUrlOverride: options.databaseUrlOverride,
  });
  const root = options.imports?.length
    ? { module: TestRootModule, imports: [AppModule.forRoot(config), ...options.imports] }
    : AppModule.forRoot(config);
  const app = await NestFactory.create(root, new ExpressHttpAdapter(), { logger: false, abortOnError: false });
  configureApp(app, config);
  // Every JSON response is checked against the OpenAPI document; close() fails on a mismatch.
  const responses = await ResponseChecker.install(app, config, options.checkResponses ?? true);
  await app.init();
  const db = app.get(DataSource);
  const tokens = app.get(TokenService);
  const server = app.getHttpServer();
  return {
    app,
    config,
    database,
    db,
    http: () => request(server),
    factories: new Factories(app, db, tokens),
    tokenFor: (userId) => tokens.issue(userId, 'access').token,
    responses,
    async close() {
      await app.close();
      if (ownsDatabase) await dropTestDatabase(database);
      rmSync(dataDir, { recursive: true, force: true });
      responses.assertClean();
    },
  };
}

/**
 * A test app and what `build` puts in it, for one-line beforeAll blocks
 * (`({ t, w } = await createTrackerWorld())`). When `build` fails the app is closed again, so a failed
 * setup leaves no database or open handle behind.
 */
export async function createTestAppWith<T extends object>(
  options: TestAppOptions,
  build: (t: TestApp) => Promise<T>,
): Promise<T & { t: TestApp }> {
  const t = await createTestApp(options);
  try {
    return { ...(await build(t)), t };
  } catch (error) {
    await t.close().catch(() => undefined);
    throw error;
  }
}

/** A second instance of `of`'s service: its database and its cache prefix (so one Redis namespace when set). */
export function createPeerApp(
  of: TestApp,
  options: Omit<TestAppOptions, 'database' | 'cachePrefix'> = {},
): Promise<TestApp> {
  return createTestApp({ ...options, database: of.database, cachePrefix: of.config.cachePrefix });
}

/**
 * Closes the apps in the order given (peers before the app owning the database), skipping those a
 * failed beforeAll never made; every one is closed even when an earlier close fails, whose error is
 * then thrown.
 */
export async function closeApps(...apps: (TestApp | undefined)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const app of apps) await app?.close().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

/** A test app and one user of `role` in it: `({ t, user: admin } = await createTestAppWithUser('admin'))`. */
export function createTestAppWithUser(
  role: Role = 'user',
  options: TestAppOptions = {},
): Promise<{ t: TestApp; user: CreatedUser }> {
  return createTestAppWith(options, async (t) => ({ user: await t.factories.user({ roles: [role] }) }));
}
