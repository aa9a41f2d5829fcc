/**
 * Benchmark suite: `npm run bench -- --scale small|medium|large [--only a,b] [--fresh]`.
 * Builds/reuses the bench database, starts the service in a child process, runs every scenario
 * against same-run ceilings, then prints a table and writes bench/results/latest.json and
 * docs/performance.md. Not part of `npm test`.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareBenchDatabase, withClient } from './suite/bench-db.js';
import { RouteMissing } from './suite/load.js';
import { parseOptions } from './suite/options.js';
import { describeMachine, printTable, writeJson, writeMarkdown } from './suite/report.js';
import type { ScenarioOutcome } from './suite/results.js';
import { APP_PORT, SCENARIO_RUNNERS, type BenchContext } from './suite/scenarios.js';
import { BENCH_JWT_SECRET, startServer, type ServerHandle } from './suite/server-client.js';

const log = (message: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = new Date().toISOString();
  const clock = performance.now();
  const loadAtStart = loadavg()[0];
  log(`scale ${options.scale}${options.only ? `, only ${[...options.only].join(',')}` : ''}`);

  const db = await prepareBenchDatabase(options.scale, options.sizes, options.fresh, log);
  const postgres = await withClient(
    db.url,
    async (c) => (await c.query<{ v: string }>(`SELECT split_part(version(), ' on ', 1) AS v`)).rows[0].v,
  );
  const postgresSettings = await withClient(
    db.url,
    async (c) =>
      (
        await c.query<{ s: string }>(
          `SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) AS s FROM pg_settings
        WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'synchronous_commit')`,
        )
      ).rows[0].s,
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'tps-bench-'));
  log('starting the service');
  const app = await startServer(
    'app',
    APP_PORT,
    {
      NODE_ENV: 'production',
      DATABASE_URL: db.url,
      REDIS_URL: process.env.REDIS_URL,
      JWT_SECRET: BENCH_JWT_SECRET,
      LOG_LEVEL: options.logLevel,
      DATA_DIR: dataDir,
      CACHE_PREFIX: `tps-bench-${options.scale}-${Date.now().toString(36)}`,
      BENCH_ADMIN_USER_ID: String(db.data.adminUserId),
    },
    options.profile ? ['--cpu-prof', '--cpu-prof-dir', 'data/bench-profiles'] : [],
  );
  await new Promise((r) => setTimeout(r, 2000));
  const afterStart = await app.memory();
  const idle = !options.only || options.only.has('memory') ? await settledIdleMemory(app, afterStart, log) : afterStart;
  const ctx: BenchContext = {
    options,
    db,
    app,
    auth: { authorization: `Bearer ${app.token}` },
    frameworkRps: new Map(),
    copyRowsPerSecond: null,
    startRss: afterStart.rss,
    idleRss: idle.rss,
    idleHeap: idle.heapUsed,
    underLoadRss: 0,
  };

  const outcomes: ScenarioOutcome[] = [];
  try {
    for (const [name, run] of SCENARIO_RUNNERS) {
      if (options.only && !options.only.has(name)) continue;
      log(`scenario ${name}`);
      const t0 = performance.now();
      try {
        const figures = await run(ctx);
        outcomes.push({ name, status: 'ok', seconds: (performance.now() - t0) / 1000, figures });
      } catch (error) {
        const skipped = error instanceof RouteMissing;
        const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
        const reason = (error instanceof Error ? error.message : String(error)) + cause;
        log(`  ${skipped ? 'skipped' : 'FAILED'}: ${reason}`);
        outcomes.push({
          name,
          status: skipped ? 'skipped' : 'failed',
          reason: skipped ? `skipped: ${reason}` : reason,
          seconds: (performance.now() - t0) / 1000,
          figures: [],
        });
      }
    }
  } finally {
    await app.stop();
    await db.embedded?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const totalSeconds = (performance.now() - clock) / 1000;
  const machine = describeMachine(postgres, postgresSettings, loadAtStart);
  const command = `${benchEnvironment()}npm run bench -- ${process.argv.slice(2).join(' ') || '--scale small'}`;
  const d = db.data.sizes;
  const dataset = `${db.data.trackerCount.toLocaleString('en')} trackers, ${db.data.rawReports.toLocaleString('en')} raw reports, analytics run ${d.analyticsRunTrackers.toLocaleString('en')} trackers, CSV run ${d.csvRunTrackers.toLocaleString('en')} trackers`;
  printTable(outcomes);
  writeJson('bench/results/latest.json', {
    startedAt,
    totalSeconds,
    command,
    options: { ...options, only: options.only ? [...options.only] : null },
    machine,
    dataset,
    generatedSeconds: db.generatedSeconds,
    outcomes,
  });
  // A partial run (--only) must not replace the full figures in the docs.
  if (options.only) log('partial run (--only): docs/performance.md left as it was');
  else
    writeMarkdown('docs/performance.md', {
      options,
      machine,
      command,
      startedAt,
      totalSeconds,
      generatedSeconds: db.generatedSeconds,
      outcomes,
      dataset,
    });
  if (options.profile) log('CPU profile of the service: data/bench-profiles/*.cpuprofile (open in Chrome DevTools)');
  log(`done in ${totalSeconds.toFixed(0)} s`);
}

/** The environment that shaped the run, for the report (passwords in URLs are masked). */
function benchEnvironment(): string {
  const shown = ['BENCH_PG_URL', 'DATABASE_URL', 'REDIS_URL'].filter((name) => process.env[name]);
  return shown
    .map((name) => `${name}=${String(process.env[name]).replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')} `)
    .join('');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * RSS of the service at rest: right after start the young generation still holds start-up garbage,
 * which V8 gives back only when its memory reducer runs, some 15 s into an idle period. Samples
 * every second for IDLE_WINDOW_S seconds and answers the lowest sample.
 */
const IDLE_WINDOW_S = 30;

async function settledIdleMemory(
  app: ServerHandle,
  first: { rss: number; heapUsed: number },
  log: (m: string) => void,
): Promise<{ rss: number; heapUsed: number }> {
  log(`measuring idle memory (${IDLE_WINDOW_S} s at rest)`);
  let lowest = first;
  for (let second = 1; second <= IDLE_WINDOW_S; second++) {
    await new Promise((r) => setTimeout(r, 1000));
    const sample = await app.memory();
    if (sample.rss < lowest.rss) lowest = sample;
  }
  return lowest;
}
