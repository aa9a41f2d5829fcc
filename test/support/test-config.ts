import { loadConfig, type AppConfig } from '../../src/common/config/app-config.js';
import { databaseUrl } from './database.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/**
 * The validated config of a test app or medium context on `database`: silent logs, a fixed JWT
 * secret, no demo data, a small pool, Redis when asked for, and no geofence automation (it adds
 * status entries to every tracker that reports; the geofence tests turn it on).
 */
export function testConfig(options: {
  database: string;
  dataDir: string;
  redis: boolean;
  cachePrefix?: string;
  env?: Record<string, string | undefined>;
  databaseUrlOverride?: string;
}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    JWT_SECRET: TEST_JWT_SECRET,
    SEED_DEMO_DATA: 'false',
    DATA_DIR: options.dataDir,
    DB_POOL_SIZE: '5',
    REDIS_URL: options.redis ? process.env.REDIS_URL : undefined,
    CACHE_PREFIX: options.cachePrefix ?? options.database,
    GEOFENCE_ENABLED: 'false',
    ...options.env,
    DATABASE_URL: options.databaseUrlOverride ?? databaseUrl(options.database),
  });
}
