import { readFileSync, writeFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { SCHEMA_TYPES_FILE } from '../../src/cli/commands/db-types.command.js';
import { loadConfig } from '../../src/common/config/app-config.js';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source-options.js';
import { Db } from '../../src/infrastructure/database/db.js';
import { generateSchemaTypes } from '../../src/infrastructure/database/schema-types.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';

/**
 * The declared schema (src/infrastructure/database/schema.ts, which row types are picked from) is
 * what the migrations build. After a migration: `npm run cli -- db:types`, or run this file with
 * UPDATE_SCHEMA_TYPES=1.
 */
describe('Declared schema', () => {
  let database: string;
  let ds: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    ds = new DataSource(dataSourceOptions(loadConfig({ NODE_ENV: 'test' }), databaseUrl(database)));
    await ds.initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await dropTestDatabase(database);
  });

  it('equals the schema the migrations build', async () => {
    const generated = await generateSchemaTypes(new Db(ds));
    if (process.env.UPDATE_SCHEMA_TYPES === '1') writeFileSync(SCHEMA_TYPES_FILE, generated);
    expect(readFileSync(SCHEMA_TYPES_FILE, 'utf8')).toBe(generated);
  });
});
