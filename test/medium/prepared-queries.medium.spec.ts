import { QueryFailedError } from 'typeorm';
import { raw } from '../../src/infrastructure/database/db.js';
import { PreparedQueries } from '../../src/infrastructure/database/prepared-queries.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/** Protocol-level prepared statements of the connection that runs this very query (itself included). */
const OWN_STATEMENTS = `SELECT name FROM pg_prepared_statements WHERE NOT from_sql AND name LIKE 'q\\_%'`;

describe('PreparedQueries (hot reads as named prepared statements)', () => {
  describe('direct to PostgreSQL', () => {
    let t: MediumContext;
    beforeAll(async () => {
      t = await createMediumContext({ factories: false });
    });
    afterAll(() => t.close());

    it('prepares each statement text under one stable name', async () => {
      const prepared = t.get(PreparedQueries);
      const first = await prepared.rows<{ name: string }>(raw(OWN_STATEMENTS));
      expect(first.map((r) => r.name)).toEqual([expect.stringMatching(/^q_[0-9a-f]{20}$/)]);
      const again = await prepared.rows<{ name: string }>(raw(OWN_STATEMENTS));
      expect(again.map((r) => r.name)).toContain(first[0].name);
    });

    it('fails like DataSource.query does (QueryFailedError with the driver error)', async () => {
      const failure = await t
        .get(PreparedQueries)
        .rows(raw('SELECT * FROM no_such_table'))
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(QueryFailedError);
      expect((failure as QueryFailedError).driverError).toMatchObject({ code: '42P01' });
    });
  });

  describe('behind PgBouncer (USING_PGBOUNCER=true)', () => {
    let t: MediumContext;
    beforeAll(async () => {
      t = await createMediumContext({ env: { USING_PGBOUNCER: 'true' }, factories: false });
    });
    afterAll(() => t.close());

    it('runs the same reads unnamed: a transaction-mode pooler may switch server connections', async () => {
      expect(await t.get(PreparedQueries).rows(raw(OWN_STATEMENTS))).toEqual([]);
    });
  });
});
