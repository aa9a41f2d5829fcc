/**
 * Hostile-load figures of the hardening rounds, over HTTP against the compiled service: how
 * `GET /health/status` answers (sampled one request at a time) at rest, while ten senders push
 * 7.9 MB `[[[…]]]` bodies without a token, and while 100 notification streams replay an inbox of
 * 80 000 notifications from `Last-Event-ID: 0`.
 *
 *   npx nest build && node dist/bench/adversarial.js
 *
 * Env: BENCH_PG_URL, BENCH_PORT (default 3919), BENCH_SECONDS (per phase, default 10), REDIS_URL
 * (optional). It creates and drops its own database `tps_bench_adversarial_<pid>`.
 */
import pg from 'pg';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchDatabaseUrl,
  dropDatabase,
  log,
  percentile,
  prepareDatabase,
  runScript,
  signJwt,
  spawnBenchService,
  stopService,
  waitForServer,
} from './standalone.js';

const PORT = Number(process.env.BENCH_PORT ?? 3919);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const NAME = `tps_bench_adversarial_${process.pid}`;
const BASE = `http://127.0.0.1:${PORT}/api/v1`;
const USERS = 20;
const EVENTS = 4_000;
const STREAMS_PER_USER = 5;

interface Sampled {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

/** Samples /health/status back to back until `done` resolves. */
async function sampleHealth(done: Promise<unknown>): Promise<Sampled> {
  let finished = false;
  void done.finally(() => (finished = true));
  const times: number[] = [];
  while (!finished) {
    const t0 = performance.now();
    await fetch(`${BASE}/health/status`).then((r) => r.arrayBuffer());
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x);
  return {
    p50: round(percentile(times, 50)),
    p99: round(percentile(times, 99)),
    max: round(times.at(-1) ?? 0),
    n: times.length,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deepBodies(until: number): Promise<Record<number, number>> {
  const depth = 3_950_000;
  const body = Buffer.from('['.repeat(depth) + ']'.repeat(depth));
  const statuses: Record<number, number> = {};
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < until) {
        const res = await fetch(`${BASE}/trackers`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }).catch(() => null);
        const status = res?.status ?? 0;
        await res?.arrayBuffer().catch(() => undefined);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

async function seedInbox(db: pg.Client): Promise<number[]> {
  const { rows: users } = await db.query<{ id: number }>(
    `INSERT INTO users (name, email, password_hash, roles)
     SELECT 'reader ' || g, 'reader-' || g || '@bench', 'x', '{admin}' FROM generate_series(1, $1) g RETURNING id`,
    [USERS],
  );
  await db.query(`
    WITH c AS (INSERT INTO clients (name) VALUES ('adversarial') RETURNING id),
         b AS (INSERT INTO brands (name, client_id) SELECT 'b', id FROM c RETURNING id, client_id),
         r AS (INSERT INTO production_runs (brand_id, client_id) SELECT id, client_id FROM b RETURNING id, client_id)
    INSERT INTO trackers (name, production_run_id) SELECT 'streamed', id FROM r`);
  await db.query('BEGIN');
  await db.query(
    `INSERT INTO notification_events (tracker_id, tracker_name, production_run_id, client_id, from_status, to_status,
                                      source, status_entry_id, occurred_at)
     SELECT t.id, t.name, t.production_run_id, pr.client_id, 'CREATED', 'IN_TRANSIT', 'manual', g, now()
       FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id CROSS JOIN generate_series(1, $1) g
      WHERE t.name = 'streamed'`,
    [EVENTS],
  );
  await db.query('COMMIT');
  return users.map((u) => u.id);
}

/** Opens the streams and reads them until `until`; answers the statuses and bytes received. */
async function replayingStreams(userIds: number[], until: number) {
  const statuses: Record<number, number> = {};
  let bytes = 0;
  const controller = new AbortController();
  const streams = userIds.flatMap((id) =>
    Array.from({ length: STREAMS_PER_USER + (id === userIds[0] ? 1 : 0) }, async () => {
      const res = await fetch(`${BASE}/notifications/stream`, {
        headers: { authorization: `Bearer ${signJwt(id, BENCH_SECRET)}`, 'last-event-id': '0' },
        signal: controller.signal,
      }).catch(() => null);
      statuses[res?.status ?? 0] = (statuses[res?.status ?? 0] ?? 0) + 1;
      const reader = res?.body?.getReader();
      try {
        for (;;) {
          const chunk = await reader?.read();
          if (!chunk || chunk.done) break;
          bytes += chunk.value.byteLength;
        }
      } catch {
        // aborted at the end of the phase
      }
    }),
  );
  await sleep(Math.max(0, until - Date.now()));
  controller.abort();
  await Promise.allSettled(streams);
  return { statuses, bytes };
}

async function main(): Promise<void> {
  await prepareDatabase(BENCH_ADMIN_URL, NAME, true);
  const service = spawnBenchService(NAME, PORT, 'warn');
  const db = new pg.Client({ connectionString: benchDatabaseUrl(NAME) });
  try {
    await waitForServer(service, PORT);
    await db.connect();
    const userIds = await seedInbox(db);
    const notifications = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications')).rows[0].n;
    log(`seeded ${notifications} notifications for ${userIds.length} users`);

    const rest = await sampleHealth(sleep(SECONDS * 1000));
    log(`at rest: /health/status ${JSON.stringify(rest)}`);

    const bodiesDone = deepBodies(Date.now() + SECONDS * 1000);
    const underBodies = await sampleHealth(bodiesDone);
    log(
      `ten senders of 7.9 MB [[[…]]] without a token: /health/status ${JSON.stringify(underBodies)}; answers ${JSON.stringify(await bodiesDone)}`,
    );

    const streamsDone = replayingStreams(userIds, Date.now() + SECONDS * 1000);
    const underStreams = await sampleHealth(streamsDone);
    const { statuses, bytes } = await streamsDone;
    log(
      `${userIds.length * STREAMS_PER_USER + 1} streams from Last-Event-ID 0: /health/status ${JSON.stringify(underStreams)}; stream answers ${JSON.stringify(statuses)}; ${(bytes / 1e6).toFixed(1)} MB received`,
    );
  } finally {
    await db.end().catch(() => undefined);
    await stopService(service);
    await dropDatabase(BENCH_ADMIN_URL, NAME);
  }
}

runScript(main);
