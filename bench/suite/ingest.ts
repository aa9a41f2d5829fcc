import { spawn } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import type { BenchData } from './bench-db.js';
import { postJson } from './load.js';

export interface ReportIn {
  tracker_id: number;
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
}

/**
 * Reports as a device fleet would send them: random trackers, times in the last three days,
 * positions in Europe (outside the excluded box), one in ten below the confidence threshold.
 */
export function makeReports(data: BenchData, count: number): ReportIn[] {
  const now = Date.now();
  const reports: ReportIn[] = new Array(count);
  for (let i = 0; i < count; i++) {
    reports[i] = {
      tracker_id: data.firstTrackerId + Math.floor(Math.random() * data.trackerCount),
      timestamp: new Date(now - 60_000 - Math.floor(Math.random() * 3 * 86_400_000)).toISOString(),
      latitude: Math.round((40 + Math.random() * 15) * 1e6) / 1e6,
      longitude: Math.round((-5 + Math.random() * 25) * 1e6) / 1e6,
      confidence: Math.random() < 0.1 ? 1 : 3,
    };
  }
  return reports;
}

export interface IngestRun {
  reportsPerSecond: number;
  requests: number;
  accepted: number;
  aggregated: number;
  rejected: number;
  p50: number;
  p99: number;
}

/** Request bodies built ahead so building them is not timed (more are built on the fly if they run out). */
export function prepareBodies(data: BenchData, batch: number, seconds: number): Buffer[] {
  const count = Math.max(4, Math.ceil((seconds * 60_000) / batch));
  return Array.from({ length: count }, () => Buffer.from(JSON.stringify({ reports: makeReports(data, batch) })));
}

/**
 * Sustained ingest: `concurrency` requests in flight for `seconds`, each a batch of `batch` fresh
 * reports (bodies are built ahead so building them is not timed). reports/s counts accepted ones.
 */
export async function ingestOverHttp(
  url: string,
  headers: Record<string, string>,
  data: BenchData,
  options: { batch: number; seconds: number; concurrency: number; bodies: Buffer[] },
): Promise<IngestRun> {
  const bodies = options.bodies;
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let accepted = 0;
  let aggregated = 0;
  let rejected = 0;
  let next = 0;
  const deadline = performance.now() + options.seconds * 1000;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < deadline) {
      // Past the prepared bodies, build more on the fly (slower, but never re-sends a duplicate batch).
      const body = bodies[next++] ?? Buffer.from(JSON.stringify({ reports: makeReports(data, options.batch) }));
      const t0 = performance.now();
      type Answer = { accepted?: number; aggregated?: number; rejected?: unknown[]; detail?: string };
      const send = () => postJson<Answer>(url, headers, body, agent);
      // One retry on a connection the server closed while idle (keep-alive race), nothing else.
      const response = await send().catch(send);
      const result = response.json;
      if (response.status !== 200) throw new Error(`ingest answered ${response.status}: ${result.detail ?? ''}`);
      latencies.push(performance.now() - t0);
      accepted += result.accepted ?? 0;
      aggregated += result.aggregated ?? 0;
      rejected += result.rejected?.length ?? 0;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  agent.destroy();
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    reportsPerSecond: accepted / elapsed,
    requests: latencies.length,
    accepted,
    aggregated,
    rejected,
    p50: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN,
  };
}

const CEILING_TABLE = 'bench_ingest_ceiling';
const CEILING_COLUMNS =
  '(tracker_id int, timestamp timestamptz, latitude double precision, longitude double precision, confidence int)';

async function freshCeilingTable(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP TABLE IF EXISTS ${CEILING_TABLE}; CREATE UNLOGGED TABLE ${CEILING_TABLE} ${CEILING_COLUMNS}`);
  await c.end();
}

/**
 * Database ceiling: the same kind of report rows streamed with COPY FROM STDIN (through psql,
 * since pg-copy-streams is not a dependency) into an unindexed UNLOGGED table. rows/s.
 */
export async function copyCeiling(url: string, data: BenchData, rows: number): Promise<number> {
  await freshCeilingTable(url);
  const psql = spawn(
    'psql',
    [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', `COPY ${CEILING_TABLE} FROM STDIN (FORMAT csv)`],
    {
      stdio: ['pipe', 'ignore', 'inherit'],
    },
  );
  const done = new Promise<void>((resolve, reject) => {
    psql.on('error', reject);
    psql.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql COPY exited with ${code}`))));
  });
  // Rows are rendered before the clock starts: the ceiling measures the database, not this process.
  const chunks: string[] = [];
  for (let built = 0; built < rows; built += 10_000) {
    chunks.push(
      makeReports(data, Math.min(10_000, rows - built))
        .map((r) => `${r.tracker_id},${r.timestamp},${r.latitude},${r.longitude},${r.confidence}\n`)
        .join(''),
    );
  }
  const started = performance.now();
  for (const text of chunks) {
    if (!psql.stdin.write(text)) await new Promise((r) => psql.stdin.once('drain', r));
  }
  psql.stdin.end();
  await done;
  return rows / ((performance.now() - started) / 1000);
}

/** The same rows as INSERT … SELECT unnest(arrays) in 10 000-row batches, `concurrency` connections. */
export async function unnestCeiling(
  url: string,
  data: BenchData,
  seconds: number,
  concurrency: number,
): Promise<number> {
  await freshCeilingTable(url);
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  const batches = Array.from({ length: Math.max(4, Math.ceil((seconds * 150_000) / 10_000)) }, () => {
    const r = makeReports(data, 10_000);
    return [
      r.map((x) => x.tracker_id),
      r.map((x) => x.timestamp),
      r.map((x) => x.latitude),
      r.map((x) => x.longitude),
      r.map((x) => x.confidence),
    ];
  });
  let next = 0;
  let inserted = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const batch = batches[next++ % batches.length];
        await pool.query(
          `INSERT INTO ${CEILING_TABLE} SELECT * FROM unnest($1::int[], $2::timestamptz[], $3::float8[], $4::float8[], $5::int[])`,
          batch,
        );
        inserted += 10_000;
      }
    }),
  );
  const rate = inserted / ((performance.now() - started) / 1000);
  await pool.query(`DROP TABLE ${CEILING_TABLE}`);
  await pool.end();
  return rate;
}
