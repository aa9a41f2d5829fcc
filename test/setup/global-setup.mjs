// Provides a PostgreSQL server for the run: DATABASE_URL when set (CI), else an embedded one
// started once under data/test-postgres (or where a root run must place it, see
// src/infrastructure/database/embedded-postgres-placement.ts). Each test file then clones its own
// database from a migrated template (test/support/database.ts).
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';

export default async function globalSetup() {
  process.env.TEST_RUN_ID = randomBytes(4).toString('hex');
  if (process.env.DATABASE_URL) {
    const name = new URL(process.env.DATABASE_URL).pathname.slice(1);
    if (!/test/i.test(name)) {
      throw new Error(`Refusing to run tests against database "${name}": its name must contain "test".`);
    }
    process.env.TEST_PG_ADMIN_URL = process.env.DATABASE_URL;
  } else {
    // The service's own launcher (from dist/, built when stale): same placement rules as `npm start`,
    // so a root run from a home of mode 0700 works too.
    execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], { stdio: 'inherit' });
    const launcher = pathToFileURL(resolve('dist/src/infrastructure/database/embedded-postgres.js')).href;
    const { startEmbeddedPostgres } = await import(launcher);
    const port = Number(process.env.TEST_EMBEDDED_PG_PORT ?? 54330);
    try {
      const server = await startEmbeddedPostgres({
        dataDir: 'data',
        name: 'test-postgres',
        port,
        portVariable: 'TEST_EMBEDDED_PG_PORT',
        runtimeDir: process.env.EMBEDDED_PG_RUNTIME_DIR,
        flags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=300'],
        log: (message) => console.log(`[tests] ${message}`),
      });
      globalThis.__embeddedTestPostgres = server;
      process.env.TEST_PG_ADMIN_URL = server.url;
    } catch (error) {
      // A StartupError names the cause and the fix in one line; the stack would add nothing.
      if (error?.name !== 'StartupError') throw error;
      console.error(`\n[tests] cannot start: ${error.message}`);
      process.exit(1);
    }
    console.log('[tests] (set DATABASE_URL to use another server)');
  }
  if (!process.env.REDIS_URL) {
    console.log('[tests] REDIS_URL not set: Redis-backed cache tests are skipped (in-process cache used)');
  }
}
