import pg from 'pg';
import type { QueryRunner } from 'typeorm';
import { DatabaseGuard } from '../../src/infrastructure/database/database-guard.js';
import { DatabasePool } from '../../src/infrastructure/database/database-pool.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { FaultProxy } from '../support/fault-proxy.js';
import {
  call,
  listen,
  ReliabilityProbeModule,
  sleep,
  summary,
  trafficUntil,
  waitFor,
  type Outcome,
} from '../support/reliability.js';

const UNAVAILABLE = { detail: 'Service temporarily unavailable' };
/** a request against an unreachable database fails within this bound, never hangs. */
const FAIL_FAST_BOUND_MS = 5000;

function expectOnlyOkOr503(outcomes: Outcome[]) {
  for (const o of outcomes) {
    if (o.status === 503) expect(o.body).toEqual(UNAVAILABLE);
    else expect([200, 201]).toContain(o.status);
  }
}

describe('Reliability: PostgreSQL behind a fault proxy', () => {
  let proxy: FaultProxy;
  let database: string;
  let t: TestApp;
  let base: string;
  let token: string;
  let direct: pg.Client;

  const read = () => call(base, 'GET', '/api/v1/reliability-probe/read', { token });
  const write = (i: number) =>
    call(base, 'POST', '/api/v1/reliability-probe/write', { token, body: { name: `w-${Date.now()}-${i}` } });
  let trackerId = 0;
  const ingestStart = Date.now() - 3_600_000;
  /** A batch of 5 reports with timestamps unique to request i (so every accepted one can be found again). */
  const ingest = (i: number) =>
    call(base, 'POST', '/api/v1/locations/reports', {
      token,
      body: {
        reports: Array.from({ length: 5 }, (_, k) => ({
          tracker_id: trackerId,
          timestamp: new Date(ingestStart + i * 1000 + k).toISOString(),
          latitude: 48 + k / 100,
          longitude: 11,
          confidence: 3,
        })),
      },
    });
  const listClients = () => call(base, 'GET', '/api/v1/clients', { token });
  /** Probe write and read, a real list and real ingest, in turn. */
  const mixed = (i: number) => [write, ingest, listClients, read][i % 4](i);
  const healthy = async () => (await read()).status === 200;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await FaultProxy.forUrl(databaseUrl(database));
    // Without the in-process cache tier, so every request needs the database for its user row: this
    // suite is about requests that need it (with the tier, a warm cached read needs none).
    t = await createTestApp({
      database,
      databaseUrlOverride: proxy.rewrite(databaseUrl(database)),
      env: { NEAR_CACHE_MAX_MB: '0' },
      imports: [ReliabilityProbeModule],
    });
    token = (await t.factories.admin()).token;
    trackerId = (await t.factories.tracker()).id;
    base = await listen(t.app);
    direct = new pg.Client({ connectionString: databaseUrl(database) });
    await direct.connect();
  });

  afterAll(async () => {
    await direct?.end();
    await t?.close();
    await proxy?.close();
    if (database) await dropTestDatabase(database);
  });

  afterEach(async () => {
    await proxy.pass();
    await waitFor(healthy, 10_000);
  });

  it('cut under traffic: fails fast with 503, recovers by itself, loses no acknowledged write', async () => {
    let cutAt = 0;
    let restoredAt = 0;
    const outcomes = await trafficUntil(8, mixed, async () => {
      await sleep(300);
      cutAt = performance.now();
      await proxy.cut();
      await sleep(1500);
      await proxy.pass();
      restoredAt = performance.now();
      await waitFor(healthy, 10_000);
      await sleep(200);
    });
    const recoveryMs = Math.round(performance.now() - restoredAt - 200);
    const s = summary(outcomes);
    console.log(`[reliability] PostgreSQL cut: ${JSON.stringify(s)}, recovered ${recoveryMs} ms after it returned`);

    expectOnlyOkOr503(outcomes);
    expect(s.byStatus[503]).toBeGreaterThan(0);
    expect(s.byStatus[200]).toBeGreaterThan(0);
    expect(s.maxMs).toBeLessThan(FAIL_FAST_BOUND_MS);
    expect(cutAt).toBeGreaterThan(0);

    // Every write answered 201 was committed: nothing acknowledged is lost.
    const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => (o.body as { id: number }).id);
    expect(acknowledged.length).toBeGreaterThan(0);
    const { rows } = await direct.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM clients WHERE id = ANY($1::int[])',
      [acknowledged],
    );
    expect(rows[0].n).toBe(acknowledged.length);
    // Every ingest batch answered 200 is stored.
    const ingested = outcomes.filter(
      (o) => o.status === 200 && typeof (o.body as { accepted?: number }).accepted === 'number',
    );
    expect(ingested.length).toBeGreaterThan(0);
    const acceptedReports = ingested.reduce((n, o) => n + (o.body as { accepted: number }).accepted, 0);
    expect(acceptedReports).toBe(ingested.length * 5);
    const timestamps = ingested.flatMap((o) =>
      Array.from({ length: 5 }, (_, k) => new Date(ingestStart + o.i * 1000 + k).toISOString()),
    );
    const stored = await direct.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM location_reports WHERE tracker_id = $1 AND timestamp = ANY($2::timestamptz[])',
      [trackerId, timestamps],
    );
    expect(stored.rows[0].n).toBe(acceptedReports);
  });

  it('black-holed database (TCP accepted, no reply): in-flight and new requests fail within 5 s, then recover', async () => {
    await proxy.blackhole();
    const started = performance.now();
    const during = await Promise.all(
      Array.from({ length: 6 }, (_, i) => mixed(i).then((r) => ({ ...r, ms: performance.now() - started }))),
    );
    const timeTo503 = Math.round(Math.max(...during.map((o) => o.ms)));
    for (const o of during) expect(o).toMatchObject({ status: 503, body: UNAVAILABLE });
    expect(timeTo503).toBeLessThan(FAIL_FAST_BOUND_MS);

    // Once declared unreachable, new requests are refused at once rather than waiting again.
    const refusedStart = performance.now();
    expect(await read()).toEqual({ status: 503, body: UNAVAILABLE });
    const refusedMs = Math.round(performance.now() - refusedStart);

    await proxy.pass();
    const recoveryMs = Math.round(await waitFor(healthy, 10_000));
    console.log(
      `[reliability] PostgreSQL black-holed: all 503 within ${timeTo503} ms, next request refused in ${refusedMs} ms, recovered ${recoveryMs} ms after it returned`,
    );
  });

  it('a killed liveness connection is not mistaken for a dead database', async () => {
    const guard = t.app.get(DatabaseGuard);
    const refusedBefore = guard.refused.unavailable;
    const killed = await direct.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'tracker-pipeline-liveness'`,
      [database],
    );
    expect(killed.rowCount).toBe(1);
    const outcomes = await trafficUntil(4, mixed, () => sleep(2500));
    for (const o of outcomes) expect([200, 201]).toContain(o.status);
    expect(guard.isAvailable).toBe(true);
    expect(guard.refused.unavailable).toBe(refusedBefore);
  });

  it('slow database (300 ms each way) is not mistaken for a dead one', async () => {
    await proxy.delay(300);
    const outcomes = await Promise.all(Array.from({ length: 4 }, (_, i) => mixed(i)));
    for (const o of outcomes) expect([200, 201]).toContain(o.status);
  });
});

describe('Reliability: pool exhaustion', () => {
  let t: TestApp;
  let base: string;
  let token: string;
  const held: QueryRunner[] = [];

  beforeAll(async () => {
    // 2 connections → at most 40 waiting checkouts (MAX_WAITING_PER_CONNECTION = 20), each giving up after 2 s.
    // Without the in-process cache tier: every request then needs a connection for the user row,
    // which is what this test exhausts (with it, a warm request needs no connection at all).
    t = await createTestApp({
      env: { DB_POOL_SIZE: '2', DB_CONNECTION_TIMEOUT_MS: '2000', NEAR_CACHE_MAX_MB: '0' },
      imports: [ReliabilityProbeModule],
    });
    token = (await t.factories.admin()).token;
    base = await listen(t.app);
  });

  afterAll(async () => {
    await Promise.all(held.map((r) => r.release()));
    await t?.close();
  });

  it('answers 503 at once beyond the queue bound, bounded waits for the queued, and recovers', async () => {
    expect((await call(base, 'GET', '/api/v1/reliability-probe/read', { token })).status).toBe(200);
    // Occupy every pooled connection, as long-running requests would.
    for (let i = 0; i < 2; i++) {
      const runner = t.db.createQueryRunner();
      await runner.connect();
      held.push(runner);
    }
    const guard = t.app.get(DatabaseGuard);
    const pool = t.app.get(DatabasePool);
    const refusedBefore = guard.refused.exhausted;
    let maxWaiting = 0;
    const sampler = setInterval(() => (maxWaiting = Math.max(maxWaiting, pool.stats().waiting)), 5);
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, () =>
        call(base, 'GET', '/api/v1/reliability-probe/read', { token }).then((r) => ({
          ...r,
          ms: performance.now() - started,
        })),
      ),
    );
    clearInterval(sampler);
    for (const o of outcomes) expect(o).toMatchObject({ status: 503, body: UNAVAILABLE });
    const refusedAtOnce = guard.refused.exhausted - refusedBefore;
    const slowest = Math.round(Math.max(...outcomes.map((o) => o.ms)));
    console.log(
      `[reliability] pool exhaustion (size 2, 60 requests): queue peaked at ${maxWaiting}, ${refusedAtOnce} refused without queueing, slowest 503 after ${slowest} ms`,
    );
    // The queue never grows past its bound; the rest are refused without waiting.
    expect(maxWaiting).toBeLessThanOrEqual(guard.maxWaiting);
    expect(guard.maxWaiting).toBe(40);
    expect(refusedAtOnce).toBeGreaterThan(0);
    expect(slowest).toBeLessThan(FAIL_FAST_BOUND_MS);

    await Promise.all(held.splice(0).map((r) => r.release()));
    expect((await call(base, 'GET', '/api/v1/reliability-probe/read', { token })).status).toBe(200);
  });
});
