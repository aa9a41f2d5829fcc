/**
 * Standalone benchmark of GET /trackers/{id}/track over HTTP against the compiled service and a real
 * PostgreSQL: the service's memory while it streams tracks of 100 000 and BENCH_TRACK_POINTS
 * (1 000 000) eligible reports through the cursor and the simplifier, in GeoJSON and GPX, and a
 * track refused for max_points. Peak RSS growth over the idle RSS is sampled every 10 ms from
 * /proc; the body is consumed as it arrives.
 *
 *   npx nest build && node dist/bench/tracks.js
 *
 * Env: BENCH_PG_URL, BENCH_PORT (default 3923), BENCH_TRACK_POINTS, BENCH_SERVICE_HEAP_MB (the service's
 * V8 old-space limit: a track whose memory grew with its length would end the service). Creates and drops its own
 * database `tps_bench_tracks`; the reports are inserted with SQL (a smooth path with ±10 m of noise,
 * one report per 10 s).
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import {
  BENCH_ADMIN_URL,
  BENCH_SECRET,
  benchDatabaseUrl,
  dropDatabase,
  log,
  machineInfo,
  prepareDatabase,
  runScript,
  signJwt,
  spawnService,
  stopService,
  waitForServer,
} from './standalone.js';

const PORT = Number(process.env.BENCH_PORT ?? 3923);
const POINTS = Number(process.env.BENCH_TRACK_POINTS ?? 1_000_000);
const DB_NAME = 'tps_bench_tracks';
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** A tracker with `points` eligible reports; its id. */
async function trackerWithReports(db: pg.Client, runId: number, points: number): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO trackers (name, production_run_id) VALUES ($1, $2) RETURNING id`,
    [`track-${points}`, runId],
  );
  await db.query(
    `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
     SELECT $1, now() - ($2 - n) * interval '10 seconds',
            -30 + sin(n / 1000.0) * 0.5 + n * 0.000001 + (random() - 0.5) * 0.0002,
            -20 + cos(n / 700.0) * 0.5 + (random() - 0.5) * 0.0002, 3, true
       FROM generate_series(1, $2) n`,
    [rows[0].id, points],
  );
  return rows[0].id;
}

async function measure(pid: number, url: string, token: string) {
  const idle = rssBytes(pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 10);
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const chunks: Buffer[] = [];
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  const text = Buffer.concat(chunks).toString();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssBytes(pid));
  return {
    status: res.status,
    seconds: Math.round(seconds * 100) / 100,
    kept_points: keptPoints(text),
    body_mb: mb(text.length),
    idle_rss_mb: mb(idle),
    peak_rss_growth_mb: mb(peak - idle),
  };
}

/** Points in a track answer: GeoJSON's point_count, GPX's trkpt or KML's gx:coord elements. */
function keptPoints(text: string): number | null {
  if (text.startsWith('{"type":"FeatureCollection"'))
    return (JSON.parse(text) as { features: { properties: { point_count: number } }[] }).features[0].properties
      .point_count;
  const gpx = text.match(/<trkpt /g)?.length;
  return gpx ?? text.match(/<gx:coord>/g)?.length ?? null;
}

async function main(): Promise<void> {
  const pgVersion = await prepareDatabase(BENCH_ADMIN_URL, DB_NAME, true);
  const heapMb = process.env.BENCH_SERVICE_HEAP_MB;
  const child = spawnService({
    env: heapMb ? { NODE_OPTIONS: `--max-old-space-size=${heapMb}` } : {},
    port: PORT,
    databaseUrl: benchDatabaseUrl(DB_NAME),
    jwtSecret: BENCH_SECRET,
    logLevel: 'warn',
  });
  const db = new pg.Client({ connectionString: benchDatabaseUrl(DB_NAME) });
  try {
    await waitForServer(child, PORT, { attempts: 300 });
    await db.connect();
    const { rows } = await db.query<{ run: number; admin: number }>(`
      WITH c AS (INSERT INTO clients (name) VALUES ('bench') RETURNING id),
           b AS (INSERT INTO brands (name, client_id) SELECT 'bench', id FROM c RETURNING id),
           r AS (INSERT INTO production_runs (description, brand_id) SELECT 'bench', id FROM b RETURNING id),
           a AS (INSERT INTO users (name, email, password_hash, roles) VALUES ('admin', 'admin@bench', 'x', '{admin}') RETURNING id)
      SELECT (SELECT id FROM r) AS run, (SELECT id FROM a) AS admin`);
    const token = signJwt(rows[0].admin, BENCH_SECRET);
    log(`inserting ${POINTS} + 100000 reports`);
    const small = await trackerWithReports(db, rows[0].run, 100_000);
    const large = await trackerWithReports(db, rows[0].run, POINTS);
    await db.query('ANALYZE location_reports');
    const base = `http://127.0.0.1:${PORT}/api/v1/trackers`;
    const results: Record<string, unknown> = {};
    // Warm-up: the first request loads code paths and pools.
    await measure(child.pid!, `${base}/${small}/track?simplify_m=25&max_points=50000`, token);
    for (const [name, tracker, query] of [
      ['100k geojson simplify_m=25', small, 'simplify_m=25&max_points=50000'],
      [`${POINTS / 1000}k geojson simplify_m=25`, large, 'simplify_m=25&max_points=50000'],
      [`${POINTS / 1000}k geojson simplify_m=25, again`, large, 'simplify_m=25&max_points=50000'],
      [`${POINTS / 1000}k gpx simplify_m=25`, large, 'format=gpx&simplify_m=25&max_points=50000'],
      [`${POINTS / 1000}k kml simplify_m=5`, large, 'format=kml&simplify_m=5&max_points=50000'],
      [`${POINTS / 1000}k geojson unsimplified → 422`, large, 'max_points=50000'],
    ] as const) {
      log(name);
      results[name] = await measure(child.pid!, `${base}/${tracker}/track?${query}`, token);
    }
    console.log(
      JSON.stringify(
        { machine: machineInfo(pgVersion), points: POINTS, heap_limit_mb: heapMb ?? null, results },
        null,
        2,
      ),
    );
  } finally {
    await db.end().catch(() => undefined);
    await stopService(child);
    await dropDatabase(BENCH_ADMIN_URL, DB_NAME);
  }
}

runScript(main);
