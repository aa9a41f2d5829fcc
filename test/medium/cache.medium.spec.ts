import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { redisAvailable } from '../support/app.js';
import { createMediumContext, type MediumContext, type MediumOptions } from '../support/medium.js';

/** The cache needs only the infrastructure modules. */
const cacheContext = (options: MediumOptions) => createMediumContext({ ...options, factories: false });

function behavesAsACache(label: string, make: () => Promise<MediumContext>) {
  describe(`CacheService on ${label}`, () => {
    let t: MediumContext;
    let cache: CacheService;
    beforeAll(async () => {
      t = await make();
      cache = t.get(CacheService);
      // The app does not wait for Redis at start (a request never blocks on the cache); these
      // tests are about a working store, so wait until its round trip works (a busy CI machine
      // can take a moment to connect).
      const deadline = Date.now() + 15_000;
      for (;;) {
        try {
          await cache.ping(2000);
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    });
    afterAll(() => t.close());

    it('stores, reads and deletes values', async () => {
      await cache.set('unit:a', { n: 1 }, 60);
      expect(await cache.get('unit:a')).toEqual({ n: 1 });
      await cache.del('unit:a');
      expect(await cache.get('unit:a')).toBeUndefined();
    });

    it('changes keys when a generation is bumped', async () => {
      const before = await cache.key('list', ['area-x'], { q: 1 });
      expect(await cache.key('list', ['area-x'], { q: 1 })).toBe(before);
      await cache.bump('area-x');
      expect(await cache.key('list', ['area-x'], { q: 1 })).not.toBe(before);
    });

    it('counts within a window', async () => {
      expect((await cache.increment('unit:counter', 60))?.count).toBe(1);
      expect((await cache.increment('unit:counter', 60))?.count).toBe(2);
      expect((await cache.counter('unit:counter')).count).toBe(2);
      await cache.resetCounter('unit:counter');
      expect((await cache.counter('unit:counter')).count).toBe(0);
    });

    it('passes the health round trip', async () => {
      await expect(cache.ping(2000)).resolves.toBeUndefined();
    });
  });
}

behavesAsACache('the in-process store', () => cacheContext({ redis: false }));

if (redisAvailable) {
  behavesAsACache('Redis', () => cacheContext({ redis: true }));

  it('shares generations between two instances through Redis', async () => {
    const a = await cacheContext({ redis: true });
    const b = await cacheContext({ redis: true, database: a.database, cachePrefix: a.config.cachePrefix });
    try {
      const cacheA = a.get(CacheService);
      const cacheB = b.get(CacheService);
      const keyB = await cacheB.key('list', ['shared'], {});
      await cacheA.bump('shared');
      expect(await cacheB.key('list', ['shared'], {})).not.toBe(keyB);
    } finally {
      await b.close();
      await a.close();
    }
  });
} else {
  it.skip('Redis-backed cache tests (REDIS_URL not set)', () => undefined);
}

describe('CacheService with a dead Redis', () => {
  let t: MediumContext;
  beforeAll(async () => {
    t = await cacheContext({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(() => t.close());

  it('answers misses and skips writes without throwing or stalling', async () => {
    const cache = t.get(CacheService);
    const started = Date.now();
    await cache.set('k', 'v', 10);
    expect(await cache.get('k')).toBeUndefined();
    expect((await cache.generations(['a', 'a']))[0]).not.toBe((await cache.generations(['a']))[0]);
    expect(await cache.increment('c', 10)).toBeNull();
    // Liveness, not speed: each call is bounded by the 250 ms guard, so this never hangs.
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(cache.ping(500)).rejects.toThrow();
  });
});
