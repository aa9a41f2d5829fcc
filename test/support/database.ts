import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/common/config/app-config.js';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source-options.js';

function adminUrl(): string {
  const url = process.env.TEST_PG_ADMIN_URL;
  if (!url) throw new Error('TEST_PG_ADMIN_URL is not set: run tests through jest (globalSetup)');
  return url;
}

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

function migrationsHash(): string {
  const hash = createHash('sha1');
  for (const file of readdirSync('migrations').sort()) hash.update(file).update(readFileSync(`migrations/${file}`));
  return hash.digest('hex').slice(0, 12);
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs all migrations on an empty database `name`. */
export async function migrate(name: string): Promise<void> {
  const config = loadConfig({ NODE_ENV: 'test' });
  const ds = new DataSource(dataSourceOptions(config, databaseUrl(name)));
  await ds.initialize();
  try {
    await ds.runMigrations({ transaction: 'each' });
  } finally {
    await ds.destroy();
  }
}

/** Name of a database with all migrations applied, created once per migration set (advisory lock). */
async function templateDatabase(): Promise<string> {
  const name = `tps_tpl_${migrationsHash()}`;
  await withAdmin(async (client) => {
    await client.query('SELECT pg_advisory_lock(727274)');
    try {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount === 0) {
        await client.query(`CREATE DATABASE "${name}"`);
        try {
          await migrate(name);
        } catch (error) {
          await client.query(`DROP DATABASE IF EXISTS "${name}"`);
          throw error;
        }
        // Templates of earlier migration sets are dead weight; one still being cloned stays.
        const stale = await client.query<{ datname: string }>(
          `SELECT datname FROM pg_database WHERE datname LIKE 'tps\\_tpl\\_%' AND datname <> $1`,
          [name],
        );
        for (const { datname } of stale.rows)
          await client.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => undefined);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(727274)');
    }
  });
  return name;
}

/** A fresh, migrated database for one test file: `tps_test_<run>_<random>`, cloned from the template. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<string> {
  const name = `tps_test_${process.env.TEST_RUN_ID ?? 'x'}_${randomBytes(4).toString('hex')}`;
  if (options.migrated === false) {
    await withAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
    return name;
  }
  const template = await templateDatabase();
  await withAdmin((client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return name;
}

export async function dropTestDatabase(name: string): Promise<void> {
  if (!name.startsWith('tps_test_')) throw new Error(`refusing to drop ${name}`);
  await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
