/**
 * A/B of the analytics JSON between builds: services of different builds run against the same
 * database (each started by hand, e.g. from a git worktree:
 * `DATABASE_URL=…/tps_bench_medium JWT_SECRET=<BENCH_SECRET> PORT=3998 GEOFENCE_ENABLED=false node dist/src/main.js`),
 * and requests alternate between them round by round, each with its own `as_of` (every one
 * computed, none cached). On a host whose speed drifts, the ratio of the p50s is the figure to
 * compare; the absolute times are not.
 *
 *   npx nest build && node dist/bench/analytics-ab.js <port,port,…> [rounds=20] [runId=1] [asOfDaysBack=0]
 *
 * The token is signed with BENCH_SECRET for user id 1 (the bench data set's admin).
 */
import { BENCH_SECRET, signJwt } from './standalone.js';

const [portList, roundsArg = '20', runArg = '1', daysBackArg = '0'] = process.argv.slice(2);
if (!portList) {
  console.error('usage: node dist/bench/analytics-ab.js <port,port,…> [rounds] [runId] [asOfDaysBack]');
  process.exit(2);
}
const ports = portList.split(',').map(Number);
const rounds = Number(roundsArg);
const token = signJwt(1, BENCH_SECRET);
// A distinct as_of per request, away from earlier runs' (whose answers may still be cached).
const base = Date.now() - Number(daysBackArg) * 86_400_000 - 5_000 - Math.floor(Math.random() * 100_000);
const times = ports.map((): number[] => []);
for (let round = 0; round < rounds; round++) {
  for (const [k, port] of ports.entries()) {
    const asOf = new Date(base - (round * ports.length + k) * 1000).toISOString();
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/production-runs/${runArg}/analytics?as_of=${asOf}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.status !== 200) throw new Error(`port ${port} answered ${res.status}`);
    await res.arrayBuffer();
    times[k].push(performance.now() - started);
  }
}
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const first = p50(times[0]);
console.log(
  ports
    .map(
      (port, k) => `${port}: p50 ${p50(times[k]).toFixed(1)} ms (${(p50(times[k]) / first).toFixed(2)} of ${ports[0]})`,
    )
    .join(' | '),
);
