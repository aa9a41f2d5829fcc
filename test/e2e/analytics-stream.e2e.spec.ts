import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { JSON_BATCH_TRACKERS } from '../../src/analytics/analytics-json.writer.js';
import { ERRORS } from '../../src/common/errors/error-catalogue.js';
import { DatabasePool } from '../../src/infrastructure/database/database-pool.js';
import { AS_OF, poolConnectionsReleased } from '../support/analytics.js';
import { createTestApp, createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { pausedHolding } from '../support/connections.js';

/**
 * The analytics JSON of runs larger than one list row of the database cursor: streamed as it is
 * read (chunked, no length up front), cached only up to ANALYTICS_CACHE_MAX_MB (2 MB here), and
 * cut — never completed — when the database fails midway.
 */
describe('Production-run analytics JSON, streamed', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let storage: { id: number; name: string };
  const url = (runId: number) => `/api/v1/production-runs/${runId}/analytics`;

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin', { env: { ANALYTICS_CACHE_MAX_MB: '2' } }));
    // JSON metacharacters in a name the SQL writes into every tracker's visit.
    storage = await t.factories.storageLocation('Hall "B" \\ 1');
  });
  afterAll(() => t.close());

  /**
   * A run of `count` trackers named `<prefix>-<n>` plus `pad` characters, each CREATED 03-01, in
   * storage 03-02 → 03-04, IN_TRANSIT since: at AS_OF a 10-day journey with one 2-day visit.
   */
  async function bulkRun(count: number, prefix: string, pad = 0): Promise<number> {
    const run = await t.factories.run({ description: prefix });
    await t.db.query(
      `WITH ins AS (
         INSERT INTO trackers (name, production_run_id, status, created_at, updated_at)
         SELECT $2 || '-' || g || repeat('x', $3), $1, 'IN_TRANSIT', '2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z' FROM generate_series(1, $4) g
         RETURNING id)
       INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id)
       SELECT id, s.status, s.ts, CASE WHEN s.status = 'IN_STORAGE' THEN $5::int END FROM ins
       CROSS JOIN (VALUES ('CREATED', '2026-03-01T00:00:00Z'::timestamptz), ('IN_STORAGE', '2026-03-02T00:00:00Z'),
                          ('IN_TRANSIT', '2026-03-04T00:00:00Z')) s(status, ts)`,
      [run.id, prefix, pad, count, storage.id],
    );
    return run.id;
  }

  const connectionsReleased = () => poolConnectionsReleased(t);

  async function listeningPort(): Promise<number> {
    const server = t.app.getHttpServer() as http.Server;
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  it('streams the run in several cursor batches with the exact text and figures, then serves the same bytes from the cache', async () => {
    // Two cursor batches, the last one partial.
    const count = JSON_BATCH_TRACKERS + JSON_BATCH_TRACKERS / 2;
    const runId = await bulkRun(count, 'stream');
    const res = await t.http().get(url(runId)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-length']).toBeUndefined();
    // The SQL writes the text: the same field order, escapes and number formats as JSON.stringify.
    expect(JSON.stringify(res.body)).toBe(res.text);
    expect(t.responses.problemWith('GET', url(runId), 200, res.body)).toBeUndefined();

    const { tracker_analytics: trackers, ...rest } = res.body;
    expect(trackers).toHaveLength(count);
    const ids = trackers.map((tr: { tracker_id: number }) => tr.tracker_id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(count);
    expect(new Set(trackers.map((tr: { tracker_name: string }) => tr.tracker_name)).size).toBe(count);
    for (const tracker of [
      trackers[0],
      trackers[JSON_BATCH_TRACKERS - 1],
      trackers[JSON_BATCH_TRACKERS],
      trackers[count - 1],
    ]) {
      expect(tracker).toEqual({
        tracker_id: expect.any(Number),
        tracker_name: expect.stringMatching(/^stream-\d+$/),
        total_journey_duration_days: 10,
        delivery_location_name: '',
        delivery_location_duration_days: 0,
        delivery_location_duration_hours: 0,
        current_status: 'IN_TRANSIT',
        journey_completion_percent: 33.3,
        storage_location_visits: [
          {
            storage_location_id: storage.id,
            location_name: 'Hall "B" \\ 1',
            arrived_at: '2026-03-02T00:00:00.000Z',
            departed_at: '2026-03-04T00:00:00.000Z',
            duration_days: 2,
          },
        ],
        total_storage_duration_days: 2,
      });
    }
    expect(rest).toMatchObject({
      production_run_id: runId,
      production_run_description: 'stream',
      total_trackers: count,
    });
    expect(rest.storage_location_performance).toEqual([
      {
        storage_location_id: storage.id,
        location_name: 'Hall "B" \\ 1',
        tracker_count: count,
        visit_count: count,
        total_duration_days: 2 * count,
        average_duration_days: 2,
        min_duration_days: 2,
        max_duration_days: 2,
      },
    ]);
    const summary = await t
      .http()
      .get(`${url(runId)}/summary`)
      .query({ as_of: AS_OF })
      .set(admin.auth)
      .expect(200);
    expect(rest.aggregate_metrics).toEqual(summary.body);
    expect(await connectionsReleased()).toBe(true);

    // Under the cache bound: the second answer is the cached text, written with its length.
    const again = await t.http().get(url(runId)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(again.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    expect(again.text).toBe(res.text);
  });

  it('computes a result above ANALYTICS_CACHE_MAX_MB on every request instead of caching it', async () => {
    const runId = await bulkRun(5000, 'big', 300); // ~4 MB of JSON
    const tracker = (await t.db.query(`SELECT min(id) AS id FROM trackers WHERE production_run_id = $1`, [runId]))[0]
      .id;
    const first = await t.http().get(url(runId)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(first.text.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(first.body.aggregate_metrics.completed_trackers).toBe(0);
    // A write behind the service's back (no invalidation): only a computed answer can see it.
    await t.db.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp) VALUES ($1, 'DELIVERED', '2026-03-05T00:00:00Z')`,
      [tracker],
    );
    const second = await t.http().get(url(runId)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(second.headers['transfer-encoding']).toBe('chunked');
    expect(second.body.aggregate_metrics.completed_trackers).toBe(1);
    expect(second.body.tracker_analytics[0]).toMatchObject({ tracker_id: tracker, current_status: 'DELIVERED' });
  });

  it('stops reading the cursor and releases its connection when the client goes away midway', async () => {
    const runId = await bulkRun(30_000, 'gone', 200);
    const port = await listeningPort();
    const pool = t.app.get(DatabasePool);
    let heldWhilePaused = -1;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: `${url(runId)}?as_of=${AS_OF}`, headers: admin.auth },
        (res) => {
          res.once('data', () => {
            res.pause();
            // The stream's connection, parked on its cursor; the aggregates' companion connection
            // may still be finishing on a loaded machine, so wait for it to go back (not for the stream's).
            void pausedHolding(pool).then((held) => {
              heldWhilePaused = held;
              req.destroy();
              resolve();
            }, reject);
          });
        },
      );
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    });
    expect(heldWhilePaused).toBe(1);
    expect(await connectionsReleased()).toBe(true);
  });

  it('cuts the response, never completing it, when the database connection fails midway', async () => {
    const runId = await bulkRun(30_000, 'cut', 200); // ~20 MB: far more than the socket buffers hold
    const port = await listeningPort();
    const outcome = await new Promise<{ complete: boolean; text: string; terminated: number }>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: `${url(runId)}?as_of=${AS_OF}`, headers: admin.auth },
        (res) => {
          expect(res.statusCode).toBe(200);
          const chunks: Buffer[] = [];
          let terminated = -1;
          res.once('data', () => {
            // Stop reading: the service waits for the socket to drain, its cursor parked mid-run.
            res.pause();
            setTimeout(() => {
              void t.db
                .query(
                  // The list's statement in progress, its cursor parked (pg_stat_activity keeps only the
                  // text's start; idle pooled connections show their last statement).
                  `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                  WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
                    AND query LIKE '/* analytics list */%'`,
                )
                .then(([row]: { n: number }[]) => {
                  terminated = row.n;
                  res.resume();
                }, reject);
            }, 300);
          });
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', () => undefined); // "aborted": what this test expects
          res.on('close', () =>
            resolve({ complete: res.complete, text: Buffer.concat(chunks).toString('utf8'), terminated }),
          );
        },
      );
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    });
    expect(outcome.terminated).toBe(1);
    expect(outcome.complete).toBe(false);
    expect(outcome.text.startsWith(`{"production_run_id":${runId},`)).toBe(true);
    expect(() => JSON.parse(outcome.text)).toThrow();
    // The broken connection is discarded, not returned to the pool, and the service carries on.
    expect(await connectionsReleased()).toBe(true);
    const small = await bulkRun(3, 'after');
    const after = await t.http().get(url(small)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(after.body.total_trackers).toBe(3);
  });
});

describe('Production-run analytics with a one-connection pool', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { DB_POOL_SIZE: '1' } });
  });
  afterAll(() => t.close());

  it('computes the aggregates on the reading connection itself when no second one is to spare', async () => {
    const admin = await t.factories.admin();
    const storage = await t.factories.storageLocation('Hall C');
    const run = await t.factories.run();
    for (let i = 0; i < 3; i++) {
      await t.factories.tracker({
        runId: run.id,
        history: [
          { status: 'CREATED', timestamp: '2026-03-01T00:00:00Z' },
          { status: 'IN_STORAGE', timestamp: '2026-03-02T00:00:00Z', storageLocationId: storage.id },
          { status: 'IN_TRANSIT', timestamp: '2026-03-04T00:00:00Z' },
        ],
      });
    }
    const json = await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics`)
      .query({ as_of: AS_OF })
      .set(admin.auth)
      .expect(200);
    expect(json.body.tracker_analytics).toHaveLength(3);
    expect(json.body.aggregate_metrics).toMatchObject({ total_trackers: 3, completed_trackers: 0 });
    expect(json.body.storage_location_performance).toEqual([
      expect.objectContaining({
        storage_location_id: storage.id,
        tracker_count: 3,
        visit_count: 3,
        total_duration_days: 6,
        average_duration_days: 2,
      }),
    ]);
    const csv = await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics/csv`)
      .query({ as_of: AS_OF })
      .set(admin.auth)
      .expect(200);
    expect(csv.text).toContain('Total Trackers,3');
  });
});

describe('Production-run analytics JSON, statement timeout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { DB_STATEMENT_TIMEOUT_MS: '1000' } });
  });
  afterAll(() => t.close());

  it('answers 503 when the statement runs past the timeout before its first rows, and answers again after', async () => {
    const admin = await t.factories.admin();
    const run = await t.factories.run();
    await t.factories.tracker({ runId: run.id, history: [{ status: 'CREATED', timestamp: '2026-03-01T00:00:00Z' }] });
    const url = `/api/v1/production-runs/${run.id}/analytics`;
    const runner = t.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      // The statement waits for this lock, and a wait counts toward the statement timeout.
      await runner.query('LOCK TABLE tracker_journey_facts IN ACCESS EXCLUSIVE MODE');
      const res = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(503);
      expect(res.body).toEqual({ detail: ERRORS.unavailable.detail });
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    const res = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(res.body.total_trackers).toBe(1);
  });
});
