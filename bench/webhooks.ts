/**
 * Standalone benchmark of webhook delivery, over HTTP against the compiled service, a real
 * PostgreSQL and a local receiver (node http on 127.0.0.1, answering 200 at once):
 * 1. fan-out — BENCH_CHANGES (1 000) status changes, each sent to BENCH_WEBHOOKS (10) webhooks:
 *    deliveries per second (first event to last delivery) and the latency from each event's commit
 *    (the delivery's created_at) to its arrival at the receiver (p50/p99);
 * 2. ingest — reports that move BENCH_INGEST_TRACKERS (10 000) trackers CREATED → IN_TRANSIT through
 *    geofence automation, with no webhook and then with BENCH_WEBHOOKS subscribed (fresh database
 *    each, same run): ingest throughput, and the time until every delivery arrived.
 *
 *   npx nest build && node dist/bench/webhooks.js
 *
 * Env: BENCH_PG_URL, BENCH_PORT (default 3921), BENCH_CHANGES, BENCH_WEBHOOKS, BENCH_INGEST_TRACKERS.
 * The service runs in production mode with WEBHOOK_ALLOW_PRIVATE_TARGETS=true (the receiver is
 * local); webhooks are inserted directly (an http:// URL is refused by the API in production).
 * Creates and drops its own database `tps_bench_webhooks`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { loadConfig } from '../src/common/config/app-config.js';
import { newSigningSecret, WebhookSecrets } from '../src/webhooks/webhook-secrets.js';
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

const PORT = Number(process.env.BENCH_PORT ?? 3921);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 1000);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 10);
const INGEST_TRACKERS = Number(process.env.BENCH_INGEST_TRACKERS ?? 10_000);
const DB_NAME = 'tps_bench_webhooks';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver answering 200 at once, noting when each webhook-id first arrived (epoch ms). */
async function receiver() {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!arrivals.has(id)) arrivals.set(id, Date.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { arrivals, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Client, brand, run, `trackers` CREATED trackers, an admin and an ingest user; and `webhooks` webhooks of the admin. */
async function world(db: pg.Client, trackers: number, webhooks: number, url: string) {
  const { rows } = await db.query<{ admin: number; ingest: number }>(`
    WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
         b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id),
         r AS (INSERT INTO production_runs (description, brand_id) SELECT 'bench', id FROM b RETURNING id),
         t AS (INSERT INTO trackers (name, production_run_id, created_at) SELECT 'W-' || n, r.id, now() - interval '10 days' FROM r, generate_series(1, ${trackers}) n RETURNING id, created_at),
         h AS (INSERT INTO tracker_status_history (tracker_id, status, timestamp) SELECT id, 'CREATED', created_at FROM t RETURNING 1),
         a AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('admin', 'admin@bench', 'x', '{admin}') RETURNING id),
         i AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('ingest', 'ingest@bench', 'x', '{ingest}') RETURNING id)
    SELECT (SELECT id FROM a) AS admin, (SELECT id FROM i) AS ingest, (SELECT count(*) FROM h)`);
  const secrets = new WebhookSecrets(loadConfig({ JWT_SECRET: BENCH_SECRET }));
  for (let i = 0; i < webhooks; i++)
    await db.query(
      `INSERT INTO webhooks (user_id, url, event_types, secret) VALUES ($1, $2, '{tracker.status_changed}', $3)`,
      [rows[0].admin, url, secrets.seal(newSigningSecret())],
    );
  const trackerIds = (await db.query<{ id: number }>('SELECT id FROM trackers ORDER BY id')).rows.map((r) => r.id);
  return { ...rows[0], trackerIds };
}

function start(geofences: boolean) {
  return spawnService({
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: 'warn',
    env: {
      REDIS_URL: process.env.REDIS_URL ?? '',
      ADMIN_PASSWORD: 'bench-password-123',
      GEOFENCE_ENABLED: String(geofences),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
  });
}

/** Waits until `expected` deliveries arrived (or 10 minutes passed); the delivery rows' created_at by id. */
async function allArrived(db: pg.Client, arrivals: Map<string, number>, expected: number) {
  const started = Date.now();
  while (arrivals.size < expected && Date.now() - started < 600_000) await sleep(50);
  const { rows } = await db.query<{ id: string; created: string }>(
    `SELECT id::text, (extract(epoch FROM created_at) * 1000)::float8::text AS created FROM webhook_deliveries`,
  );
  return rows;
}

async function fanOut() {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const r = await receiver();
  const child = start(false);
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const w = await world(db, CHANGES, WEBHOOKS, r.url);
    const admin = signJwt(w.admin, BENCH_SECRET);
    const queue = [...w.trackerIds];
    const change = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/trackers/${id}/status`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ status: 'IN_TRANSIT' }),
        });
        if (res.status !== 201) throw new Error(`status change answered ${res.status}`);
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 8 }, change));
    const rows = await allArrived(db, r.arrivals, CHANGES * WEBHOOKS);
    const latencies = rows
      .filter((row) => r.arrivals.has(row.id))
      .map((row) => r.arrivals.get(row.id)! - Number(row.created))
      .sort((a, b) => a - b);
    const first = Math.min(...rows.map((row) => Number(row.created)));
    const last = Math.max(...r.arrivals.values());
    return {
      changes: CHANGES,
      webhooks: WEBHOOKS,
      deliveries: r.arrivals.size,
      deliveries_per_second: Math.round(r.arrivals.size / ((last - first) / 1000)),
      event_to_delivery_ms: {
        p50: +percentile(latencies, 50).toFixed(1),
        p99: +percentile(latencies, 99).toFixed(1),
        max: +(latencies.at(-1) ?? 0).toFixed(1),
      },
    };
  } finally {
    await stopService(child);
    await db.end().catch(() => undefined);
    await r.close();
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

async function ingest(webhooks: number) {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const r = await receiver();
  const child = start(true);
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const w = await world(db, INGEST_TRACKERS, webhooks, r.url);
    const token = signJwt(w.ingest, BENCH_SECRET);
    // No location has coordinates: each tracker's first report moves it CREATED → IN_TRANSIT (one event).
    const bodies: string[] = [];
    for (let start = 0; start < w.trackerIds.length; start += 1000)
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
    await allArrived(db, r.arrivals, INGEST_TRACKERS * webhooks);
    return {
      webhooks,
      reports_per_second: Math.round(INGEST_TRACKERS / ingestSeconds),
      all_delivered_seconds: +((performance.now() - started) / 1000).toFixed(2),
      deliveries: r.arrivals.size,
    };
  } finally {
    await stopService(child);
    await db.end().catch(() => undefined);
    await r.close();
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

async function main(): Promise<void> {
  const fan = await fanOut();
  const none = await ingest(0);
  const subscribed = await ingest(WEBHOOKS);
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, load: readFileSync('/proc/loadavg', 'utf8').trim() },
        fan_out: fan,
        ingest: {
          none,
          subscribed,
          with_webhooks_over_none: +(subscribed.reports_per_second / none.reports_per_second).toFixed(3),
        },
      },
      null,
      2,
    ),
  );
}

runScript(main);
