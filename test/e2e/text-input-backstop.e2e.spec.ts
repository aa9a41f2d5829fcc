import { Controller, Module, Param, Post } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Access } from '../../src/common/auth/access.decorator.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { countRows, uploadCsv } from '../support/trackers.js';

/**
 * Text PostgreSQL cannot store reaches the database only on a path that skips the request text
 * rule; this test-only route is such a path. The exception filter must answer PostgreSQL's
 * refusal (22021 for a NUL in text, 22P05 for \u0000 in jsonb) as a 422, not a 500.
 */
@Controller('unstorable-text-probe')
class UnstorableTextProbeController {
  constructor(private readonly db: DataSource) {}

  @Post(':kind')
  @Access('admin')
  async probe(@Param('kind') kind: string): Promise<unknown> {
    if (kind === 'text') return this.db.query('SELECT $1::text AS v', ['a\u0000b']);
    return this.db.query('SELECT $1::jsonb AS v', ['"a\\u0000b"']);
  }
}

@Module({ controllers: [UnstorableTextProbeController] })
class UnstorableTextProbeModule {}

describe('unstorable text that reaches PostgreSQL (production mode)', () => {
  let t: TestApp;
  let admin: CreatedUser;

  beforeAll(
    async () =>
      ({ t, user: admin } = await createTestAppWithUser('admin', {
        env: { NODE_ENV: 'production' },
        imports: [UnstorableTextProbeModule],
      })),
  );
  afterAll(() => t.close());

  it.each(['text', 'jsonb'])('a NUL in %s is 422 with a detail, never a 500 or SQL', async (kind) => {
    const res = await t.http().post(`/api/v1/unstorable-text-probe/${kind}`).set(admin.auth);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: 'Validation failed: request: contains characters that cannot be stored',
      errors: [{ field: 'request', message: 'contains characters that cannot be stored' }],
    });
  });

  it('a NUL in a CSV cell is 422 with a detail, and nothing is imported', async () => {
    const run = await t.factories.run();
    for (const csv of [
      `name,production_run_id,notes\nNUL-1,${run.id},a\u0000b\n`,
      `name,production_run_id\nNUL\u0000-2,${run.id}\n`,
    ]) {
      const res = await uploadCsv(t, admin.auth, csv);
      expect(res.status).toBe(422);
      expect(typeof res.body.detail).toBe('string');
    }
    expect(await countRows(t.db, 'trackers', 'production_run_id = $1', [run.id])).toBe(0);
  });
});
