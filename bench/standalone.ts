/**
 * Helpers shared by the standalone benchmark scripts (analytics.ts, health.ts, locations-ingest.ts,
 * load.ts): each of them creates its own database on a PostgreSQL server, starts the compiled
 * service (dist/src/main.js) as a child process against it, signs its own access tokens and talks
 * to the service over HTTP. The suite (bench/run.ts) has its own server handling in suite/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import pg from 'pg';

/** The server the scripts use when neither BENCH_PG_URL (nor, for load.ts, DATABASE_URL) is set. */
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** BENCH_PG_URL: an admin URL of the PostgreSQL server the benchmark databases are created on. */
export const BENCH_ADMIN_URL = process.env.BENCH_PG_URL ?? DEFAULT_PG_URL;

/** JWT_SECRET of the service the tps_bench_* scripts start (and sign their tokens with). */
export const BENCH_SECRET = 'bench-secret-0123456789-0123456789-0123456789';

export const log = (message: string) => console.log(`[${new Date().toISOString()}] ${message}`);

/** `serverUrl` with its database replaced by `name`. */
export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the database `name` on the server of `adminUrl` — kept when it exists, unless `fresh`
 * (then dropped and created empty) — and answers the server's version.
 */
export async function prepareDatabase(adminUrl: string, name: string, fresh: boolean): Promise<string> {
  return withClient(adminUrl, async (c) => {
    if (fresh) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const exists = !fresh && (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!exists) await c.query(`CREATE DATABASE ${name}`);
    return (await c.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  });
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** An access token for `userId` as the service issues it (HS256, the service's issuer and audience). */
export function signJwt(userId: number, secret: string): string {
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: 'HS256', typ: 'JWT' });
  const body = b64({
    sub: String(userId),
    iat: now,
    exp: now + 3600,
    iss: 'tracker-pipeline',
    aud: 'tracker-pipeline-api',
    jti: randomUUID(),
    token_type: 'access',
  });
  return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
}

/** Adds an admin user (unique e-mail, no usable password) to the database and answers a token for it. */
export async function benchAdminToken(db: pg.Client, secret: string): Promise<string> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO users (name, email, password_hash, roles) VALUES ('bench admin', $1, 'x', '{admin}') RETURNING id`,
    [`admin-${randomUUID()}@bench`],
  );
  return signJwt(rows[0].id, secret);
}

export interface ServiceOptions {
  port: number;
  databaseUrl: string;
  jwtSecret: string;
  logLevel: string;
  /** More environment for the service (ADMIN_PASSWORD, REDIS_URL, …). */
  env?: Record<string, string>;
  /** The service's entry point; default dist/src/main.js relative to the working directory. */
  entry?: string;
}

/**
 * Starts the compiled service as a child process, in production mode without demo data; its stdout
 * (request logs) is discarded, stderr is passed through. It runs its migrations on start.
 */
export function spawnService(options: ServiceOptions): ChildProcess {
  return spawn(process.execPath, [options.entry ?? 'dist/src/main.js'], {
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      PORT: String(options.port),
      NODE_ENV: 'production',
      JWT_SECRET: options.jwtSecret,
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: options.logLevel,
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** URL of the database `name` on the BENCH_PG_URL server. */
export function benchDatabaseUrl(name: string): string {
  return withDatabase(BENCH_ADMIN_URL, name);
}

/**
 * The service as the tps_bench_* scripts start it: on their database `name` of the BENCH_PG_URL
 * server, signing with BENCH_SECRET, logging at BENCH_LOG_LEVEL (else `defaultLogLevel`), with the
 * caller's REDIS_URL or none (empty, so a .env file cannot name one either) and a first-start
 * admin password.
 */
export function spawnBenchService(name: string, port: number, defaultLogLevel: string, entry?: string): ChildProcess {
  return spawnService({
    entry,
    port,
    databaseUrl: benchDatabaseUrl(name),
    jwtSecret: BENCH_SECRET,
    logLevel: process.env.BENCH_LOG_LEVEL ?? defaultLogLevel,
    env: { REDIS_URL: process.env.REDIS_URL ?? '', ADMIN_PASSWORD: 'bench-password-123' },
  });
}

/** Whether something answers HTTP on 127.0.0.1:`port`. */
export function isListening(port: number, path = '/openapi.json'): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}${path}`).then(
    () => true,
    () => false,
  );
}

/** Polls `path` every 200 ms until it answers 2xx; fails when the service exits or after `attempts` polls. */
export async function waitForServer(
  child: ChildProcess,
  port: number,
  { path = '/openapi.json', attempts = 600 } = {},
): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}${path}`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('service did not start');
}

/** SIGTERM to the service, answering once it has exited (at once when it already has). */
export async function stopService(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** CPU milliseconds (user + system) a process has used so far; 0 when it is gone (Linux /proc, 100 Hz ticks). */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime (fields 14, 15 of stat)
  } catch {
    return 0; // process gone
  }
}

/** The value at percentile `p` (0–100) of ascending `sorted`; 0 when it is empty. */
export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Pre-serialised ingest bodies of `batchSize` reports each: `report(n)` builds report number n of a
 * sequence `seq` carries across calls (so later bodies continue earlier ones).
 */
export function reportBodies(
  batchSize: number,
  count: number,
  seq: { next: number },
  report: (n: number) => object,
): string[] {
  const bodies: string[] = [];
  for (let b = 0; b < count; b++) {
    const reports = new Array(batchSize);
    for (let i = 0; i < batchSize; i++) reports[i] = report(seq.next++);
    bodies.push(JSON.stringify({ reports }));
  }
  return bodies;
}

/** The machine a result was measured on. */
export function machineInfo(pgVersion: string) {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    postgres: pgVersion,
  };
}

/** Runs a script's main(); an error is printed and ends the process with exit code 1. */
export function runScript(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
