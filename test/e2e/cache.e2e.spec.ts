import { createTestApp, type TestApp } from '../support/app.js';

// The cache itself (both stores, generations, counters, a dead Redis) is covered at service level
// in test/medium/cache.medium.spec.ts; here the application keeps answering without it.
describe('CacheService with a dead Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(() => t.close());

  it('still serves requests', async () => {
    const admin = await t.factories.admin();
    const res = await t.http().get('/api/v1/nope').set(admin.auth);
    expect(res.status).toBe(404);
  });
});
