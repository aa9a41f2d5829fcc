/**
 * Standalone benchmark of in-app notifications, over HTTP against the compiled service and a real
 * PostgreSQL:
 * 1. streams — 1 000 notification streams open on one instance (100 users × 10 streams): the
 *    service's RSS before and after opening them, and for a series of status changes the time from
 *    sending the change to its arrival on every stream (p50/p99 over all deliveries);
 * 2. burst — reports that move 10 000 trackers from CREATED to IN_TRANSIT through geofence
 *    automation (each tracker one event, 100 recipients each), ingested with the event trigger off
 *    and then on (fresh database each): ingest throughput, and the time until every event and
 *    notification is written.
 *
 *   npx nest build && node dist/bench/notifications.js
 *
 * Env: BENCH_PG_URL, BENCH_PORT (default 3919), BENCH_CHANGES (default 20). Creates and drops its
 * own database `tps_bench_notifications`.
 */
import http from 'node:http';
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchDatabaseUrl,
  dropDatabase,
  percentile,
  prepareDatabase,
  runScript,
  signJwt,
  spawnService,
  stopService,
  waitForServer,
} from './standalone.js';

const PORT = Number(process.env.BENCH_PORT ?? 3919);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
const DB_NAME = 'tps_bench_notifications';
const USERS = 100;
const STREAMS_PER_USER = 10;
const BURST_TRACKERS = 10_000;

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Client, brand, run, `trackers` CREATED trackers, an admin and `users` users of the client; ids. */
async function world(db: pg.Client, trackers: number, users: number) {
  const { rows } = await db.query<{ run: number; admin: number; ingest: number }>(`
    WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
         b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id),
         r AS (INSERT INTO production_runs (description, brand_id) SELECT 'bench', id FROM b RETURNING id),
         t AS (INSERT INTO trackers (name, production_run_id, created_at) SELECT 'N-' || n, r.id, now() - interval '10 days' FROM r, generate_series(1, ${trackers}) n RETURNING id, created_at),
         h AS (INSERT INTO tracker_status_history (tracker_id, status, timestamp) SELECT id, 'CREATED', created_at FROM t RETURNING 1),
         u AS (INSERT INTO users (name, email, password_hash, roles, client_list) SELECT 'u' || n, 'u' || n || '@bench', 'x', '{user}', ARRAY[(SELECT id FROM c)] FROM generate_series(1, ${users}) n RETURNING id),
         a AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('admin', 'admin@bench', 'x', '{admin}') RETURNING id),
         i AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('ingest', 'ingest@bench', 'x', '{ingest}') RETURNING id)
    SELECT (SELECT id FROM r) AS run, (SELECT id FROM a) AS admin, (SELECT id FROM i) AS ingest, (SELECT count(*) FROM h), (SELECT count(*) FROM u)`);
  const userIds = (
    await db.query<{ id: number }>(`SELECT id FROM users WHERE email LIKE 'u%@bench' ORDER BY id`)
  ).rows.map((r) => r.id);
  const trackerIds = (await db.query<{ id: number }>('SELECT id FROM trackers ORDER BY id')).rows.map((r) => r.id);
  return { ...rows[0], userIds, trackerIds };
}

/** Opens one stream; `onEvent` gets the arrival time of each notification id. */
function openStream(token: string, onEvent: (id: string, at: number) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: PORT,
        path: '/api/v1/notifications/stream',
        agent: false,
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          const at = performance.now();
          buffer += chunk;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const id = /^id: (\d+)$/m.exec(buffer.slice(0, cut))?.[1];
            buffer = buffer.slice(cut + 2);
            if (id) onEvent(id, at);
          }
        });
        resolve(req);
      },
    );
    req.on('error', reject);
  });
}

async function streams() {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const child = spawnService({
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: 'warn',
    env: { REDIS_URL: process.env.REDIS_URL ?? '', ADMIN_PASSWORD: 'bench-password-123', GEOFENCE_ENABLED: 'false' },
  });
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  const requests: http.ClientRequest[] = [];
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const w = await world(db, CHANGES, USERS);
    const admin = signJwt(w.admin, BENCH_SECRET);
    await sleep(2000);
    const rssBefore = rssMb(child.pid as number);
    const arrivals = new Map<string, number[]>();
    for (const userId of w.userIds) {
      const token = signJwt(userId, BENCH_SECRET);
      for (let i = 0; i < STREAMS_PER_USER; i++) {
        requests.push(
          await openStream(token, (id, at) => (arrivals.get(id) ?? arrivals.set(id, []).get(id)!).push(at)),
        );
      }
    }
    await sleep(2000);
    const rssOpen = rssMb(child.pid as number);
    const latencies: number[] = [];
    const expected = USERS * STREAMS_PER_USER;
    for (const trackerId of w.trackerIds) {
      arrivals.clear();
      const sent = performance.now();
      const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/trackers/${trackerId}/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'IN_TRANSIT' }),
      });
      if (res.status !== 201) throw new Error(`status change answered ${res.status}`);
      const deadline = Date.now() + 10_000;
      while ([...arrivals.values()].reduce((n, a) => n + a.length, 0) < expected && Date.now() < deadline)
        await sleep(5);
      const times = [...arrivals.values()].flat();
      if (times.length < expected) throw new Error(`only ${times.length} of ${expected} streams got the change`);
      latencies.push(...times.map((at) => at - sent));
    }
    const rssAfter = rssMb(child.pid as number);
    latencies.sort((a, b) => a - b);
    return {
      streams: expected,
      rss_mb: {
        before: +rssBefore.toFixed(1),
        streams_open: +rssOpen.toFixed(1),
        after_changes: +rssAfter.toFixed(1),
        growth: +(Math.max(rssOpen, rssAfter) - rssBefore).toFixed(1),
      },
      changes: w.trackerIds.length,
      delivery_ms: {
        p50: +percentile(latencies, 50).toFixed(1),
        p99: +percentile(latencies, 99).toFixed(1),
        max: +latencies[latencies.length - 1].toFixed(1),
      },
    };
  } finally {
    for (const req of requests) req.destroy();
    await stopService(child);
    await db.end().catch(() => undefined);
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

async function burst(events: boolean) {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const child = spawnService({
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: 'warn',
    env: { REDIS_URL: process.env.REDIS_URL ?? '', ADMIN_PASSWORD: 'bench-password-123', GEOFENCE_ENABLED: 'true' },
  });
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const w = await world(db, BURST_TRACKERS, USERS);
    if (!events) await db.query('ALTER TABLE trackers DISABLE TRIGGER trackers_status_events');
    const token = signJwt(w.ingest, BENCH_SECRET);
    // No location has coordinates: every report is outside every location, so each tracker's first
    // report moves it CREATED → IN_TRANSIT (one event, one notification per user and the admin).
    const bodies: string[] = [];
    for (let start = 0; start < w.trackerIds.length; start += 1000) {
      bodies.push(
        JSON.stringify({
          reports: w.trackerIds.slice(start, start + 1000).map((id, i) => ({
            tracker_id: id,
            timestamp: new Date(Date.now() - 86_400_000 + i * 1000).toISOString(),
            latitude: 48 + i / 1e4,
            longitude: 9,
            confidence: 3,
          })),
        }),
      );
    }
    const started = performance.now();
    for (const body of bodies) {
      const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/locations/reports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}`);
      await res.arrayBuffer();
    }
    const ingestSeconds = (performance.now() - started) / 1000;
    for (;;) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM trackers WHERE status = 'IN_TRANSIT'`,
      );
      if (rows[0].n === BURST_TRACKERS || performance.now() - started > 600_000) break;
      await sleep(100);
    }
    const doneSeconds = (performance.now() - started) / 1000;
    const counts = (
      await db.query(
        `SELECT (SELECT count(*) FROM notification_events)::int AS events, (SELECT count(*) FROM notifications)::int AS notifications`,
      )
    ).rows[0];
    return {
      events_on: events,
      ingest_seconds: +ingestSeconds.toFixed(2),
      reports_per_second: Math.round(BURST_TRACKERS / ingestSeconds),
      all_moved_seconds: +doneSeconds.toFixed(2),
      ...counts,
    };
  } finally {
    await stopService(child);
    await db.end().catch(() => undefined);
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

async function main(): Promise<void> {
  const streamFigures = await streams();
  const off = await burst(false);
  const on = await burst(true);
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, load: readFileSync('/proc/loadavg', 'utf8').trim() },
        streams: streamFigures,
        burst: {
          off,
          on,
          ingest_on_over_off: +(on.reports_per_second / off.reports_per_second).toFixed(3),
          all_moved_on_over_off: +(on.all_moved_seconds / off.all_moved_seconds).toFixed(3),
        },
      },
      null,
      2,
    ),
  );
}

runScript(main);
