import { writeFileSync } from 'node:fs';
import { Db } from '../../infrastructure/database/db.js';
import { generateSchemaTypes } from '../../infrastructure/database/schema-types.js';
import type { CliCommand } from '../command.js';

export const SCHEMA_TYPES_FILE = 'src/infrastructure/database/schema.ts';

export const dbTypesCommand: CliCommand = {
  name: 'db:types',
  usage:
    'db:types                            write the migrated schema as TypeScript (src/infrastructure/database/schema.ts)',
  async run(app) {
    writeFileSync(SCHEMA_TYPES_FILE, await generateSchemaTypes(app.get(Db)));
    console.log(`Wrote ${SCHEMA_TYPES_FILE}.`);
  },
};
