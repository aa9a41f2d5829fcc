import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Access } from '../../src/common/auth/access.decorator.js';
import { CacheService } from '../../src/infrastructure/cache/cache.service.js';

/**
 * Test-only routes for the fault tests, mounted with `createTestApp({ imports: [ReliabilityProbeModule] })`.
 * They go through everything a feature route does — the global guard (user row from PostgreSQL,
 * revocation read through the cache), CacheService, the pool, the exception filter — without
 * depending on feature modules that are built in parallel. Real routes can be added to the
 * traffic mixes in test/e2e/reliability*.spec.ts beside them.
 */
@Controller('reliability-probe')
class ReliabilityProbeController {
  constructor(
    private readonly db: DataSource,
    private readonly cache: CacheService,
  ) {}

  /** Cache-aside read, as list endpoints do. */
  @Get('read')
  @Access('admin', 'user')
  async read(): Promise<{ clients: number; cached: boolean }> {
    const key = await this.cache.key('probe', ['probe'], {});
    const hit = await this.cache.get<number>(key);
    if (hit !== undefined) return { clients: hit, cached: true };
    const [row] = await this.db.query<{ n: number }[]>('SELECT count(*)::int AS n FROM clients');
    await this.cache.set(key, row.n, 60);
    return { clients: row.n, cached: false };
  }

  /** A transactional write that answers only after commit (as ingest does). */
  @Post('write')
  @Access('admin')
  async write(@Body() body: { name: string }): Promise<{ id: number }> {
    const id = await this.db.transaction(async (m) => {
      const [row] = await m.query<{ id: number }[]>('INSERT INTO clients (name) VALUES ($1) RETURNING id', [
        String(body.name),
      ]);
      return row.id;
    });
    await this.cache.bump('probe');
    return { id };
  }
}

@Module({ controllers: [ReliabilityProbeController] })
export class ReliabilityProbeModule {}

export interface Outcome {
  /** Index of the request (as passed to `send`). */
  i: number;
  status: number;
  ms: number;
  body: unknown;
}

/** Runs `send` in `concurrency` loops until `stop()` resolves; every answer (or socket error as status 0) is kept. */
export async function trafficUntil(
  concurrency: number,
  send: (i: number) => Promise<{ status: number; body: unknown }>,
  stop: () => Promise<void>,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let running = true;
  let counter = 0;
  const worker = async () => {
    while (running) {
      const started = performance.now();
      const i = counter++;
      try {
        const res = await send(i);
        outcomes.push({ i, status: res.status, ms: performance.now() - started, body: res.body });
      } catch (error) {
        outcomes.push({ i, status: 0, ms: performance.now() - started, body: String(error) });
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await stop();
  running = false;
  await Promise.all(workers);
  return outcomes;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every 50 ms until it returns true; resolves with the time it took (ms). */
export async function waitFor(probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (await probe().catch(() => false)) return performance.now() - started;
    await sleep(50);
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}

export function summary(outcomes: Outcome[]): {
  count: number;
  byStatus: Record<number, number>;
  maxMs: number;
  p50: number;
  p99: number;
} {
  const byStatus: Record<number, number> = {};
  for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
  const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  return { count: outcomes.length, byStatus, maxMs: Math.round(sorted.at(-1) ?? 0), p50: at(0.5), p99: at(0.99) };
}

/** Starts the test app's HTTP server on a free port (for fetch-based traffic) and returns its base URL. */
export async function listen(app: {
  listen(port: number, host: string): Promise<unknown>;
  getHttpServer(): import('node:http').Server;
}): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as import('node:net').AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

/** One JSON request; network failures surface as status 0. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (e.g. /metrics)
  }
  return { status: res.status, body };
}
