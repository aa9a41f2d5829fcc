/**
 * Standalone benchmark of MQTT ingest beside HTTP batch ingest, in the same run, against the
 * compiled service, a real PostgreSQL and a Mosquitto broker of its own (started here on
 * BENCH_MQTT_PORT with a queue that holds the whole burst):
 * 1. HTTP — BENCH_REPORTS (50 000) reports as POST /locations/reports batches of 1 000, one after
 *    the other: reports per second;
 * 2. MQTT, messages of 1 report and of 100 reports (QoS 1), the same number of reports, published as
 *    fast as the broker acknowledges them: reports per second from the first publish until the last
 *    report is committed;
 * 3. lag — BENCH_LAG_SAMPLES (300) messages published one at a time: from the publish to the report
 *    being the tracker's latest location in the database (p50/p99; polled every 2 ms).
 *
 *   npx nest build && node dist/bench/mqtt-ingest.js
 *
 * Env: BENCH_PG_URL, BENCH_PORT (default 3922), BENCH_MQTT_PORT (default 18883), BENCH_REPORTS,
 * BENCH_TRACKERS (1 000), BENCH_LAG_SAMPLES. Creates and drops its own database `tps_bench_mqtt`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
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

const PORT = Number(process.env.BENCH_PORT ?? 3922);
const MQTT_PORT = Number(process.env.BENCH_MQTT_PORT ?? 18883);
const REPORTS = Number(process.env.BENCH_REPORTS ?? 50_000);
const TRACKERS = Number(process.env.BENCH_TRACKERS ?? 1000);
const LAG_SAMPLES = Number(process.env.BENCH_LAG_SAMPLES ?? 300);
const DB_NAME = 'tps_bench_mqtt';
const MQTT_URL = `mqtt://127.0.0.1:${MQTT_PORT}`;
const METRICS_TOKEN = 'bench-metrics-token';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Report number n of a phase: a second after report n − 1, each phase in a year of its own (no duplicates). */
function reportFor(phase: number, n: number) {
  return {
    timestamp: new Date(Date.UTC(2020 + phase, 0, 1) + n * 1000).toISOString(),
    latitude: 48 + (n % 997) / 1e4,
    longitude: 9,
  };
}

async function startBroker() {
  const dir = mkdtempSync(join(tmpdir(), 'tps-bench-mosquitto-'));
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(
    config,
    [
      `listener ${MQTT_PORT} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'user root',
      'max_queued_messages 1000000',
      'max_queued_bytes 0',
    ].join('\n') + '\n',
  );
  const child = spawn('mosquitto', ['-c', config], { stdio: 'ignore' });
  await sleep(300);
  return {
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The service's counts of MQTT messages received and of batches committed. */
async function counters(): Promise<{ received: number; commits: number }> {
  const res = await fetch(`http://127.0.0.1:${PORT}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const text = await res.text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { received: value('mqtt_ingest_messages_total'), commits: value('mqtt_ingest_batches_total') };
}

async function storedCount(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM location_reports');
  return rows[0].n;
}

async function untilStored(db: pg.Client, total: number): Promise<void> {
  const started = Date.now();
  while ((await storedCount(db)) < total) {
    if (Date.now() - started > 600_000) throw new Error('reports not stored within 10 minutes');
    await sleep(20);
  }
}

async function main(): Promise<void> {
  await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const broker = await startBroker();
  const child = spawnService({
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: 'warn',
    env: {
      REDIS_URL: process.env.REDIS_URL ?? '',
      ADMIN_PASSWORD: 'bench-password-123',
      GEOFENCE_ENABLED: 'false',
      MQTT_URL,
      MQTT_CLIENT_ID: 'bench-service',
      METRICS_TOKEN: METRICS_TOKEN,
    },
  });
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  const pub = await connectAsync(MQTT_URL, { clientId: 'bench-publisher', reconnectPeriod: 0 });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const { rows } = await db.query<{ ingest: number }>(`
      WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
           b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id),
           r AS (INSERT INTO production_runs (description, brand_id) SELECT 'bench', id FROM b RETURNING id),
           t AS (INSERT INTO trackers (name, production_run_id, device_id) SELECT 'M-' || n, r.id, 'dev-' || n FROM r, generate_series(0, ${TRACKERS - 1}) n RETURNING id),
           i AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('ingest', 'ingest@bench', 'x', '{ingest}') RETURNING id)
      SELECT (SELECT id FROM i) AS ingest, (SELECT count(*) FROM t)`);
    const ids = (await db.query<{ id: number; device_id: string }>('SELECT id, device_id FROM trackers ORDER BY id'))
      .rows;
    const trackerOf = (n: number) => ids[n % TRACKERS];
    await sleep(1000); // the subscription is in place

    // 1. HTTP batches of 1 000.
    const token = signJwt(rows[0].ingest, BENCH_SECRET);
    let started = performance.now();
    for (let from = 0; from < REPORTS; from += 1000) {
      const reports = Array.from({ length: Math.min(1000, REPORTS - from) }, (_, k) => ({
        tracker_id: trackerOf(from + k).id,
        ...reportFor(0, from + k),
        confidence: 3,
      }));
      const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/locations/reports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reports }),
      });
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}`);
      await res.arrayBuffer();
    }
    const http = Math.round(REPORTS / ((performance.now() - started) / 1000));

    // 2. MQTT messages of 1 and of 100 reports.
    const mqtt = async (phase: number, perMessage: number) => {
      const before = await storedCount(db);
      const countersBefore = await counters();
      const t0 = performance.now();
      const messages = Math.ceil(REPORTS / perMessage);
      for (let from = 0; from < messages; from += 1000) {
        const sends: Promise<unknown>[] = [];
        for (let j = from; j < Math.min(messages, from + 1000); j++) {
          // Message j: reports j·perMessage … of tracker j mod TRACKERS.
          const body = Array.from({ length: perMessage }, (_, k) => reportFor(phase, j * perMessage + k));
          const payload = JSON.stringify(perMessage === 1 ? body[0] : body);
          sends.push(pub.publishAsync(`trackers/${trackerOf(j).device_id}/reports`, payload, { qos: 1 }));
        }
        await Promise.all(sends);
      }
      await untilStored(db, before + REPORTS);
      const seconds = (performance.now() - t0) / 1000;
      return {
        reports_per_second: Math.round(REPORTS / seconds),
        messages,
        ...(await counters().then((after) => ({
          received: after.received - countersBefore.received,
          commits: after.commits - countersBefore.commits,
        }))),
      };
    };
    const single = await mqtt(1, 1);
    const hundred = await mqtt(2, 100);

    // 3. Publish → latest location, one message at a time.
    const lags: number[] = [];
    const lagTracker = ids[0];
    const lagBase = Date.now() - (LAG_SAMPLES + 60) * 1000;
    for (let i = 0; i < LAG_SAMPLES; i++) {
      const timestamp = new Date(lagBase + i * 1000).toISOString();
      started = performance.now();
      await pub.publishAsync(
        `trackers/${lagTracker.device_id}/reports`,
        JSON.stringify({ timestamp, latitude: 47, longitude: 8 }),
        { qos: 1 },
      );
      for (;;) {
        const { rows: latest } = await db.query<{ ok: boolean }>(
          `SELECT reported_at = $2::timestamptz AS ok FROM location_history_hourly WHERE tracker_id = $1 ORDER BY bucket DESC LIMIT 1`,
          [lagTracker.id, timestamp],
        );
        if (latest[0]?.ok) break;
        await sleep(2);
      }
      lags.push(performance.now() - started);
    }
    lags.sort((a, b) => a - b);
    console.log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, cpu: cpus()[0]?.model, load: readFileSync('/proc/loadavg', 'utf8').trim() },
          reports: REPORTS,
          trackers: TRACKERS,
          http_batches_of_1000: { reports_per_second: http },
          mqtt_messages_of_1: single,
          mqtt_messages_of_100: hundred,
          publish_to_latest_location_ms: {
            samples: lags.length,
            p50: +percentile(lags, 50).toFixed(1),
            p99: +percentile(lags, 99).toFixed(1),
            max: +(lags.at(-1) ?? 0).toFixed(1),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await pub.endAsync().catch(() => undefined);
    await stopService(child);
    await db.end().catch(() => undefined);
    await broker.close();
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

runScript(main);
