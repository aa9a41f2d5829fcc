import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { createTestApp, redisAvailable, type TestApp } from '../support/app.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { call, listen, ReliabilityProbeModule, sleep, summary, trafficUntil, waitFor } from '../support/reliability.js';

/** with Redis gone, no request fails and none takes longer than this. */
const SLOWEST_ALLOWED_MS = 1000;

const describeWithRedis = redisAvailable ? describe : describe.skip;

describeWithRedis('Reliability: Redis behind a fault proxy', () => {
  let proxy: FaultProxy;
  let t: TestApp;
  let base: string;
  let token: string;

  const read = () => call(base, 'GET', '/api/v1/reliability-probe/read', { token });
  const write = (i: number) =>
    call(base, 'POST', '/api/v1/reliability-probe/write', { token, body: { name: `r-${Date.now()}-${i}` } });
  const listClients = () => call(base, 'GET', '/api/v1/clients', { token });
  const basicHealth = () => call(base, 'GET', '/api/v1/health/basic', { token });
  const mixed = (i: number) => [read, listClients, read, write][i % 4](i);
  /** The probe's second read of an unchanged value is a cache hit only when Redis works. */
  const cacheServes = async () => (await read()).status === 200 && ((await read()).body as { cached: boolean }).cached;

  beforeAll(async () => {
    proxy = await FaultProxy.forUrl(process.env.REDIS_URL as string);
    // Redis is unreachable while the service boots.
    await proxy.cut();
    t = await createTestApp({
      redis: true,
      env: { REDIS_URL: proxy.rewrite(process.env.REDIS_URL as string) },
      imports: [ReliabilityProbeModule],
    });
    token = (await t.factories.admin()).token;
    base = await listen(t.app);
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('starts without Redis, reports cache_store unhealthy, serves from the database, and resumes caching when Redis returns', async () => {
    expect(t.app.get(CacheService).storeKind).toBe('redis');
    const health = await basicHealth();
    expect(health.status).toBe(200);
    expect((health.body as { components: { cache_store: { status: string } } }).components.cache_store.status).toBe(
      'unhealthy',
    );
    const first = await read();
    const second = await read();
    expect(first).toMatchObject({ status: 200, body: { cached: false } });
    expect(second).toMatchObject({ status: 200, body: { cached: false } });
    expect((await listClients()).status).toBe(200);

    await proxy.pass();
    const resumedMs = Math.round(await waitFor(cacheServes, 10_000));
    const healed = await basicHealth();
    expect((healed.body as { components: { cache_store: { status: string } } }).components.cache_store.status).toBe(
      'healthy',
    );
    console.log(
      `[reliability] Redis down at boot: served from PostgreSQL; cache resumed ${resumedMs} ms after Redis returned`,
    );
  });

  for (const fault of ['cut', 'blackhole'] as const) {
    it(`Redis ${fault} under traffic: zero failed requests, none slower than 1 s, cache resumes`, async () => {
      await waitFor(cacheServes, 10_000);
      let restoredAt = 0;
      const outcomes = await trafficUntil(8, mixed, async () => {
        await sleep(300);
        await proxy[fault]();
        await sleep(1500);
        await proxy.pass();
        restoredAt = performance.now();
        await sleep(300);
      });
      const resumedMs = Math.round(performance.now() - restoredAt + (await waitFor(cacheServes, 10_000)));
      const s = summary(outcomes);
      console.log(
        `[reliability] Redis ${fault}: ${JSON.stringify(s)}; cache resumed within ${resumedMs} ms of Redis returning`,
      );
      const failed = outcomes.filter((o) => o.status < 200 || o.status >= 300);
      expect(failed).toEqual([]);
      expect(s.maxMs).toBeLessThan(SLOWEST_ALLOWED_MS);
    });
  }
});
