import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { redisAvailable } from '../support/app.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/** Already-serialized values (the analytics JSON) are stored as they are, with Redis or without. */
for (const [label, redis] of [
  ['Redis', true],
  ['the in-memory store', false],
] as const) {
  (redis && !redisAvailable ? describe.skip : describe)(`CacheService text values on ${label}`, () => {
    let t: MediumContext;
    let cache: CacheService;
    beforeAll(async () => {
      t = await createMediumContext({ factories: false, redis });
      cache = t.get(CacheService);
      const deadline = Date.now() + 15_000;
      while (redis) {
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

    it('reads back text and bytes exactly, and misses unknown keys', async () => {
      const json = '{"name":"Zoë \\"quoted\\"","list":[1,2.5]}';
      await cache.setText('text:a', json, 60);
      expect(await cache.getText('text:a')).toBe(json);
      await cache.setText('text:b', Buffer.from(json), 60);
      expect(await cache.getText('text:b')).toBe(json);
      expect(await cache.getText('text:missing')).toBeUndefined();
    });

    it('expires text values with their TTL', async () => {
      await cache.setText('text:short', 'x', 1);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      expect(await cache.getText('text:short')).toBeUndefined();
    });
  });
}
