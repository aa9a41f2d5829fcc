import { cannon, probe, type LoadResult } from './load.js';
import type { Figure } from './results.js';
import type { BenchContext, Scenario } from './scenarios.js';
import type { ServerHandle } from './server-client.js';

const API = '/api/v1';
/** A request with a key must cost no more than one with a JWT: the key's rate within 5 % of the token's. */
const GOAL_RATIO = 0.95;

/** Server CPU time per request of a load run (robust to other load on the machine, unlike req/s). */
async function cpuMeasured(
  server: ServerHandle,
  load: () => Promise<LoadResult>,
): Promise<LoadResult & { cpuUs: number }> {
  const before = server.cpuMs();
  const r = await load();
  return { ...r, cpuUs: r.requests ? ((server.cpuMs() - before) * 1000) / r.requests : 0 };
}

/** An API key of the bench admin (scope read), created through the API with the admin's token. */
async function createKey(ctx: BenchContext): Promise<string> {
  const res = await probe(ctx.app.base, `${API}/api-keys`, {
    method: 'POST',
    headers: { ...ctx.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench ${new Date().toISOString()}`, scopes: ['read'] }),
  });
  return ((await res.json()) as { key: string }).key;
}

/**
 * API keys beside JWTs, in the same run and on the same routes: the cached tracker list and the
 * lightest route a key may call, the cached status counts (a few dozen bytes: what is left is
 * authentication — the key's stand-in for GET /users/me, which no key may call). Both are answered
 * before routing once the caller is known in process, for a key as for a token. Each pair runs
 * token, key, token, key, and the figures are the better run of each, so a burst of other load on
 * the machine hits both alike.
 */
export const apiKeysScenario: Scenario = async (ctx) => {
  const key = await createKey(ctx);
  const seconds = Math.max(2, ctx.options.sizes.seconds);
  const callers = { JWT: ctx.auth, 'API key': { 'x-api-key': key } };
  const figures: Figure[] = [];
  for (const [what, path] of [
    ['cached tracker list', `${API}/trackers?include_latest_location=false`],
    ['GET /trackers/status-counts', `${API}/trackers/status-counts`],
  ] as const) {
    const best = new Map<string, LoadResult & { cpuUs: number }>();
    for (let round = 0; round < 2; round += 1) {
      for (const [caller, headers] of Object.entries(callers)) {
        await probe(ctx.app.base, path, { headers });
        await fetch(`${ctx.app.base}${path}`, { headers });
        const r = await cpuMeasured(ctx.app, () => cannon(ctx.app.base, path, { seconds, connections: 10, headers }));
        if (!best.has(caller) || best.get(caller)!.rps < r.rps) best.set(caller, r);
      }
    }
    const jwt = best.get('JWT')!;
    const withKey = best.get('API key')!;
    const note = (r: LoadResult & { cpuUs: number }) =>
      `p50 ${r.p50} ms, p99 ${r.p99} ms, server CPU ${r.cpuUs.toFixed(0)} µs/request${r.non2xx ? `, ${r.non2xx} non-2xx` : ''}`;
    figures.push({ label: `${what}, JWT, 10 conn.`, value: jwt.rps, unit: 'req/s', note: note(jwt) });
    const ratio = jwt.rps > 0 ? withKey.rps / jwt.rps : 0;
    figures.push({
      label: `${what}, API key (X-API-Key), 10 conn.`,
      value: withKey.rps,
      unit: 'req/s',
      note: note(withKey),
      ratio: { to: 'the same route with a JWT', value: ratio },
      goal: { text: `≥ ${GOAL_RATIO * 100} % of the JWT figure`, met: ratio >= GOAL_RATIO },
    });
  }
  return figures;
};
