import { QueryFailedError } from 'typeorm';
import { raw } from '../../src/infrastructure/database/db.js';
import { PreparedQueries } from '../../src/infrastructure/database/prepared-queries.js';
import { createTestApp, type TestApp } from '../support/app.js';

/** Protocol-level prepared statements of the connection that runs this very query (itself included). */
const OWN_STATEMENTS = `SELECT name FROM pg_prepared_statements WHERE NOT from_sql AND name LIKE 'q\\_%'`;

describe('PreparedQueries (hot reads as named prepared statements)', () => {
  describe('direct to PostgreSQL', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it('prepares each statement text under one stable name', async () => {
      const prepared = t.app.get(PreparedQueries);
      const first = await prepared.rows<{ name: string }>(raw(OWN_STATEMENTS));
      expect(first.map((r) => r.name)).toEqual([expect.stringMatching(/^q_[0-9a-f]{20}$/)]);
      const again = await prepared.rows<{ name: string }>(raw(OWN_STATEMENTS));
      expect(again.map((r) => r.name)).toContain(first[0].name);
    });

    it('fails like DataSource.query does (QueryFailedError with the driver error)', async () => {
      const failure = await t.app.get(PreparedQueries).rows(raw('SELECT * FROM no_such_table')).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(QueryFailedError);
      expect((failure as QueryFailedError).driverError).toMatchObject({ code: '42P01' });
    });

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

    it('runs the same reads unnamed: a transaction-mode pooler may switch server connections', async () => {
      expect(await t.app.get(PreparedQueries).rows(raw(OWN_STATEMENTS))).toEqual([]);
      const admin = await t.factories.admin();
      await t.http().get('/api/v1/users/me').set(admin.auth).expect(200);
      const tracker = await t.factories.tracker();
      const page = await t.http().get(`/api/v1/trackers/${tracker.id}/location-history`).set(admin.auth).expect(200);
      expect(page.body).toMatchObject({ items: [], total: 0 });
    });
  });
});
