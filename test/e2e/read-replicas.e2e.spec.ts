import { randomBytes } from 'node:crypto';
import { Db, sql } from '../../src/infrastructure/database/db.js';
import { ReadReplicas, replicaStalenessBoundMs } from '../../src/infrastructure/database/read-replicas.js';
import { createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { postReports, report } from '../support/locations.js';
import { startReplicationPair, type ReplicationPair } from '../support/replication.js';

/**
 * Read replicas against a real streaming replica (test/support/replication.ts): the app runs with
 * DATABASE_URL on the pair's primary and DATABASE_READ_URL on its replica. Routing is proven by
 * the replica's stale answer: with replay paused, a write lands on the primary only, so a read that
 * misses it was answered by the replica — and one that sees it, by the primary.
 */

const MAX_LAG_MS = 2000;
const CHECK_INTERVAL_MS = 100;

let pair: ReplicationPair;
let t: TestApp;
let admin: CreatedUser;
let ingest: CreatedUser;

beforeAll(async () => {
  pair = await startReplicationPair({ database: `tps_test_replication_${randomBytes(4).toString('hex')}` });
  try {
    t = await createTestApp({
      database: pair.database,
      databaseUrlOverride: pair.primaryUrl,
      env: {
        DATABASE_READ_URL: pair.replicaUrl,
        READ_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
        READ_REPLICA_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
      },
    });
  } catch (error) {
    await pair.stop();
    throw error;
  }
  admin = await t.factories.admin();
  ingest = await t.factories.ingest();
}, 180_000);

afterAll(async () => {
  try {
    await t?.close();
  } finally {
    await pair?.stop();
  }
}, 60_000);

const replicas = () => t.app.get(ReadReplicas);
const status = () => replicas().states()[0].status;

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}

/** Replica caught up and measured as such: reads go to it. */
async function replicaInUse(): Promise<void> {
  await pair.waitForReplay();
  await waitFor('the replica to be available', () => status() === 'available' && replicas().states()[0].lagMs === 0);
}

/** Runs `read` and says which server answered it (by the routing counters). */
async function servedBy<T>(read: () => Promise<T>): Promise<{ result: T; by: 'replica' | 'primary' }> {
  const before = { ...replicas().reads };
  const result = await read();
  const after = replicas().reads;
  const replica = after.replica - before.replica;
  const primary = after.primary - before.primary;
  expect(replica + primary).toBeGreaterThan(0);
  // Parallel requests of other tests do not exist here: one request, one kind of answer.
  expect(replica === 0 || primary === 0).toBe(true);
  return { result, by: replica > 0 ? 'replica' : 'primary' };
}

async function trackerWithReports(hours: number): Promise<{ id: number; runId: number }> {
  const tracker = await t.factories.tracker();
  const base = Date.now() - 48 * 3600_000;
  const reports = Array.from({ length: hours }, (_, i) =>
    report(tracker.id, new Date(base + i * 3600_000).toISOString()),
  );
  await postReports(t, ingest, reports).expect(200);
  return { id: tracker.id, runId: tracker.production_run_id };
}

const historyTotal = async (trackerId: number): Promise<number> =>
  (
    await t
      .http()
      .get(`/api/v1/trackers/${trackerId}/location-history`)
      .query({ granularity: 'hourly' })
      .set(admin.auth)
      .expect(200)
  ).body.total;

describe('Read replicas (a real streaming replica)', () => {
  it('the data-access kit: db.replica reads run on the replica, except inside a transaction', async () => {
    await replicaInUse();
    const db = t.app.get(Db);
    const inRecovery = sql`SELECT pg_is_in_recovery() AS standby`;
    expect((await db.replica.one<{ standby: boolean }>(inRecovery)).standby).toBe(true);
    expect((await db.one<{ standby: boolean }>(inRecovery)).standby).toBe(false);
    await db.transaction(async () => {
      expect((await db.replica.one<{ standby: boolean }>(inRecovery)).standby).toBe(false);
    });
    // A read transaction on the replica carries every statement of its work, in any repository.
    await db.replica.transaction(async () => {
      expect((await db.one<{ standby: boolean }>(inRecovery)).standby).toBe(true);
    });
  });

  it('a replica read cut off mid-statement is answered by the primary', async () => {
    await replicaInUse();
    const db = t.app.get(Db);
    const before = replicas().reads.failovers;
    const read = db.replica.one<{ standby: boolean }>(sql`SELECT pg_is_in_recovery() AS standby FROM pg_sleep(1)`);
    // The app's replica connection running it (not the lag probe's, which has its own name).
    await waitFor(
      'the read to run on the replica',
      async () =>
        (
          await pair.replicaQuery(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = 'tracker-pipeline-read' AND query LIKE '%pg_sleep%'",
          )
        ).length > 0,
    );
    await pair.replicaQuery(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tracker-pipeline-read' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()",
    );
    expect((await read).standby).toBe(false);
    expect(replicas().reads.failovers).toBe(before + 1);
    // Marked down at once; the next measurement finds it well and routes reads to it again.
    await replicaInUse();
  });

  it('health reports the replica: available, measured lag, no fallback', async () => {
    await replicaInUse();
    const res = await t.http().get('/api/v1/health/basic').set(admin.auth).expect(200);
    expect(res.body.status).toBe('healthy');
    expect(res.body.read_replicas).toMatchObject({
      fallback: false,
      max_lag_ms: MAX_LAG_MS,
      replicas: [{ name: 'replica-1', status: 'available', lag_ms: expect.any(Number), error: null }],
    });
    expect(res.body.read_replicas.replicas[0].address).toBe(
      new URL(pair.replicaUrl).host + new URL(pair.replicaUrl).pathname,
    );
    expect(res.body.read_replicas.replicas[0].lag_ms).toBeLessThanOrEqual(MAX_LAG_MS);
  });

  it('a history page is served by the replica within the lag bound, and by the primary once the replica lags more', async () => {
    const tracker = await trackerWithReports(3);
    await replicaInUse();
    expect((await servedBy(() => historyTotal(tracker.id))).result).toBe(3);

    await pair.pauseReplay();
    try {
      const written = Date.now();
      await postReports(t, ingest, [report(tracker.id, new Date(Date.now() - 3600_000).toISOString())]).expect(200);
      // The replica has not replayed the report: its answer is the stale one.
      const stale = await servedBy(() => historyTotal(tracker.id));
      expect(Date.now() - written).toBeLessThan(MAX_LAG_MS);
      expect(stale).toEqual({ result: 3, by: 'replica' });

      // Past the bound the replica is `lagging` and the primary answers, without any error.
      const waited = await waitFor('the replica to be lagging', () => status() === 'lagging');
      expect(Date.now() - written).toBeGreaterThanOrEqual(MAX_LAG_MS - CHECK_INTERVAL_MS);
      expect(waited).toBeGreaterThan(0);
      expect(await servedBy(() => historyTotal(tracker.id))).toEqual({ result: 4, by: 'primary' });
      const health = await t.http().get('/api/v1/health/basic').set(admin.auth).expect(200);
      expect(health.body.status).toBe('healthy');
      expect(health.body.read_replicas.fallback).toBe(true);
      expect(health.body.read_replicas.replicas[0]).toMatchObject({ status: 'lagging' });
      expect(health.body.read_replicas.replicas[0].lag_ms).toBeGreaterThan(MAX_LAG_MS);
    } finally {
      await pair.resumeReplay();
    }
    await replicaInUse();
    expect(await servedBy(() => historyTotal(tracker.id))).toEqual({ result: 4, by: 'replica' });
  });

  it("writes, the caller's user row and reads of what the caller just wrote go to the primary", async () => {
    const runId = (await t.factories.run()).id;
    await replicaInUse();
    await pair.pauseReplay();
    try {
      // A user created now does not exist on the replica: authenticating it needs the primary.
      const fresh = await t.factories.user({ roles: ['admin'] });
      const created = await t
        .http()
        .post('/api/v1/trackers')
        .set(fresh.auth)
        .send({ name: 'fresh-on-primary', production_run_id: runId })
        .expect(201);
      const id = created.body.id as number;
      await t.http().get(`/api/v1/trackers/${id}`).set(fresh.auth).expect(200);
      await t.http().post(`/api/v1/trackers/${id}/status`).set(fresh.auth).send({ status: 'IN_TRANSIT' }).expect(201);
      const history = await t.http().get(`/api/v1/trackers/${id}/status-history`).set(fresh.auth).expect(200);
      expect(history.body.map((entry: { status: string }) => entry.status)).toContain('IN_TRANSIT');
      // The history of a tracker the replica does not show yet is looked up on the primary (not a 404).
      await t.http().get(`/api/v1/trackers/${id}/location-history`).set(fresh.auth).expect(200);
      expect(status()).toBe('available');
    } finally {
      await pair.resumeReplay();
    }
  });

  it('a cached list filled from the replica before it replayed a write is invalidated again once the replica has caught up', async () => {
    const runId = (await t.factories.run()).id;
    const list = async () =>
      (
        (await t.http().get('/api/v1/trackers').query({ production_run_id: runId }).set(admin.auth).expect(200)).body
          .items as { name: string }[]
      ).map((i) => i.name);
    await replicaInUse();
    await pair.pauseReplay();
    try {
      await t
        .http()
        .post('/api/v1/trackers')
        .set(admin.auth)
        .send({ name: 'cached-stale', production_run_id: runId })
        .expect(201);
      // The write invalidated the list; the next read missed the cache and was filled from the replica.
      expect(await servedBy(list)).toEqual({ result: [], by: 'replica' });
    } finally {
      await pair.resumeReplay();
    }
    await replicaInUse();
    // The stale page is still cached (CACHE_TTL_SECONDS is 60 s) until the second invalidation.
    const waited = await waitFor(
      'the list to show the new tracker',
      async () => (await list()).includes('cached-stale'),
      replicaStalenessBoundMs(t.config) + 5000,
    );
    expect(waited).toBeLessThan(replicaStalenessBoundMs(t.config) + 5000);
  });

  it('analytics, the CSV export, lists and pipeline health are lag-tolerant reads', async () => {
    const tracker = await trackerWithReports(2);
    await replicaInUse();
    const auth = admin.auth;
    for (const read of [
      () => t.http().get(`/api/v1/production-runs/${tracker.runId}/analytics/summary`).set(auth).expect(200),
      () => t.http().get(`/api/v1/production-runs/${tracker.runId}/analytics/csv`).set(auth).expect(200),
      () => t.http().get('/api/v1/clients').set(auth).expect(200),
      () => t.http().get('/api/v1/production-runs').set(auth).expect(200),
      () => t.http().get('/api/v1/users').set(auth).expect(200),
    ]) {
      expect((await servedBy(read)).by).toBe('replica');
    }
    const before = replicas().reads.replica;
    await t.http().get('/api/v1/health/pipeline').set(auth).expect(200);
    expect(replicas().reads.replica).toBeGreaterThan(before);
  });

  it('replica down: reads go to the primary without errors; replica back: reads go to it again', async () => {
    const tracker = await trackerWithReports(2);
    await replicaInUse();
    await pair.stopReplica();
    try {
      // Straight away, before any measurement noticed: the replica's failure is retried on the primary.
      expect(await servedBy(() => historyTotal(tracker.id))).toEqual({ result: 2, by: 'primary' });
      await waitFor('the replica to be down', () => status() === 'down');
      for (let i = 0; i < 5; i += 1)
        expect(await servedBy(() => historyTotal(tracker.id))).toEqual({ result: 2, by: 'primary' });
      await t.http().get('/api/v1/trackers').set(admin.auth).expect(200);
      const health = await t.http().get('/api/v1/health/basic').set(admin.auth).expect(200);
      expect(health.body.status).toBe('healthy');
      expect(health.body.read_replicas.fallback).toBe(true);
      expect(health.body.read_replicas.replicas[0]).toMatchObject({
        status: 'down',
        lag_ms: null,
        error: expect.any(String),
      });
    } finally {
      await pair.startReplica();
    }
    await replicaInUse();
    expect(await servedBy(() => historyTotal(tracker.id))).toEqual({ result: 2, by: 'replica' });
  });

  it('metrics: reads per target and the replica lag', async () => {
    const res = await t.http().get('/metrics').expect(200);
    const value = (line: string) =>
      Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(res.text)?.[1]);
    expect(value('db_lag_tolerant_reads_total{target="replica-1"}')).toBeGreaterThan(0);
    expect(value('db_lag_tolerant_reads_total{target="primary"}')).toBeGreaterThan(0);
    expect(value('db_replica_read_failovers_total')).toBeGreaterThan(0);
    expect(value('db_replica_available{replica="replica-1"}')).toBe(1);
    expect(value('db_replica_lag_seconds{replica="replica-1"}')).toBeGreaterThanOrEqual(0);
  });
});
