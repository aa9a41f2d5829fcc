import { createTestApp, type TestApp } from '../support/app.js';

// The statements themselves are covered at service level in test/medium/prepared-queries.medium.spec.ts;
// here the request paths that read through them answer, named and unnamed.
describe('PreparedQueries (hot reads as named prepared statements)', () => {
  describe('direct to PostgreSQL', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it('serves the authenticated request path through it', async () => {
      const admin = await t.factories.admin();
      await t.http().get('/api/v1/users/me').set(admin.auth).expect(200);
    });
  });

  describe('behind PgBouncer (USING_PGBOUNCER=true)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { USING_PGBOUNCER: 'true' } });
    });
    afterAll(() => t.close());

    it('serves the same request paths with unnamed statements', async () => {
      const admin = await t.factories.admin();
      await t.http().get('/api/v1/users/me').set(admin.auth).expect(200);
      const tracker = await t.factories.tracker();
      const page = await t.http().get(`/api/v1/trackers/${tracker.id}/location-history`).set(admin.auth).expect(200);
      expect(page.body).toMatchObject({ items: [], total: 0 });
    });
  });
});
