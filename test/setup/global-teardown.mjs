import pg from 'pg';

export default async function globalTeardown() {
  // Drop databases this run cloned but did not drop (a crashed file, say).
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  try {
    await admin.connect();
    const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE $1", [`tps_test_${process.env.TEST_RUN_ID}_%`]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } catch {
    // best effort
  } finally {
    await admin.end().catch(() => undefined);
  }
  if (globalThis.__embeddedTestPostgres) await globalThis.__embeddedTestPostgres.stop();
}
