import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigValidationError, loadConfig, type AppConfig } from './common/config/app-config.js';
import { EMBEDDED_DATABASE_NAME } from './infrastructure/database/database.constants.js';
import { ensureWritableDir } from './infrastructure/database/embedded-postgres-placement.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './infrastructure/database/embedded-postgres.js';

interface Runtime {
  config: AppConfig;
  embedded: EmbeddedDatabase | null;
}

/** Loads `.env` (if present) and validates; prints every bad variable and exits 1 on failure. */
export function loadConfigOrExit(): AppConfig {
  if (existsSync('.env')) process.loadEnvFile('.env');
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Resolves what config leaves to the runtime: outside production a missing JWT_SECRET is
 * generated once and kept in DATA_DIR; a missing DATABASE_URL starts embedded PostgreSQL.
 * A start that cannot work throws a StartupError (one line: the cause and the fix).
 */
export async function prepareRuntime(config: AppConfig, log: (m: string) => void): Promise<Runtime> {
  const resolved = { ...config };
  const needsDataDir = !resolved.jwtSecret || !resolved.databaseUrl;
  if (needsDataDir) ensureWritableDir(resolved.dataDir, 'DATA_DIR');
  if (!resolved.jwtSecret) {
    const file = join(resolved.dataDir, 'jwt-secret');
    if (!existsSync(file)) writeFileSync(file, randomBytes(48).toString('base64url'), { mode: 0o600 });
    resolved.jwtSecret = readFileSync(file, 'utf8').trim();
  }
  let embedded: EmbeddedDatabase | null = null;
  if (!resolved.databaseUrl) {
    log('No DATABASE_URL: starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      dataDir: resolved.dataDir,
      name: 'postgres',
      port: resolved.embeddedPgPort,
      runtimeDir: resolved.embeddedPgRuntimeDir,
      database: EMBEDDED_DATABASE_NAME,
      log,
    });
    resolved.databaseUrl = embedded.url;
  }
  return { config: resolved, embedded };
}
