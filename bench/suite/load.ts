import autocannon, { type RequestSpec } from 'autocannon';
import http from 'node:http';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  non2xx: number;
}

/**
 * Drives `path` with autocannon for `seconds`. `vary(n)` builds the n-th request's path (to defeat
 * a cache); omitted, every request is the same.
 */
export async function cannon(
  base: string,
  path: string,
  options: { seconds: number; connections?: number; headers?: Record<string, string>; vary?: (n: number) => string },
): Promise<LoadResult> {
  let n = 0;
  const requests: RequestSpec[] | undefined = options.vary
    ? [{ method: 'GET', setupRequest: (request) => ({ ...request, path: options.vary!(n++) }) }]
    : undefined;
  const result = await autocannon({
    url: `${base}${path}`,
    connections: options.connections ?? 10,
    duration: options.seconds,
    headers: options.headers,
    requests,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Sequential timed calls (one at a time): latency percentiles of a heavy request. */
export async function timed(
  count: number,
  call: (i: number) => Promise<void>,
): Promise<{ p50: number; p99: number; mean: number; samples: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call(i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    samples: times.length,
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Thrown by a scenario whose route is not there yet (404 Not Found / 501): reported as skipped. */
export class RouteMissing extends Error {}

/**
 * One request to check a route exists before measuring it. A 404 whose detail is the router's own
 * "Not Found", or a 501, means "not built yet"; any other non-2xx is a real failure.
 */
export async function probe(base: string, path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${base}${path}`, init);
  if (response.status === 501 || (response.status === 404 && (await response.clone().text()).includes('"Not Found"'))) {
    throw new RouteMissing(`${init.method ?? 'GET'} ${path.split('?')[0]} answered ${response.status}`);
  }
  if (!response.ok)
    throw new Error(
      `${init.method ?? 'GET'} ${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
    );
  return response;
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/**
 * GET with node:http, reading the whole body; answers status and byte count. For timing large
 * bodies: fetch's web-stream body handling costs the client ≈ 20 ms on a 4 MB body, which is not
 * the service's time (autocannon, used for every other HTTP figure, is plain node:http as well).
 */
export function getWhole(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: keepAlive }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * POST a prepared JSON body with node:http on `agent`, reading the JSON answer. The ingest load
 * generator: fetch cost the client a quarter of a core sending 1 MB bodies — CPU taken from the
 * PostgreSQL it shares the machine with.
 */
export function postJson<T>(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  agent: http.Agent,
): Promise<{ status: number; json: T }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as T });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
