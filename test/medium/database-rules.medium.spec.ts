import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import type { DatabaseRules } from '../../src/infrastructure/database/database-rules.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';

/**
 * The database's functions and triggers are defined in src/**\/*.db-rules.ts, beside the feature whose
 * rule each is; migrations are their history. On a migrated database, every function and trigger of
 * schema public (not an extension's) must be defined there, and applying the src definitions must
 * leave each one exactly as the migrations built it (pg_get_functiondef / pg_get_triggerdef).
 * Changing a rule: a new migration, and the same definition in its *.db-rules.ts file.
 */

interface RuleSource {
  file: string;
  rules: DatabaseRules;
}

/** Definitions by key (`name(argument types)` for functions, `name on table` for triggers). */
interface Catalog {
  functions: Map<string, { name: string; def: string }>;
  triggers: Map<string, { name: string; def: string }>;
}

/** Every src/**\/*.db-rules.ts file and the one DatabaseRules value it exports. */
async function loadRuleSources(): Promise<RuleSource[]> {
  const files = readdirSync('src', { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.db-rules.ts'))
    .map((file) => `src/${file.split('\\').join('/')}`)
    .sort();
  const sources: RuleSource[] = [];
  for (const file of files) {
    const values = Object.values((await import(resolve(file))) as Record<string, unknown>);
    const [rules] = values as DatabaseRules[];
    if (values.length !== 1 || !Array.isArray(rules?.functions) || !Array.isArray(rules?.triggers))
      throw new Error(`${file} must export exactly one DatabaseRules value`);
    sources.push({ file, rules });
  }
  return sources;
}

async function readCatalog(client: pg.Client): Promise<Catalog> {
  const functions = await client.query<{ key: string; name: string; def: string }>(`
    SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS key, p.proname AS name,
           pg_get_functiondef(p.oid) AS def
      FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
       AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`);
  // Clones of a partitioned table's trigger on its partitions (tgparentid) follow their parent.
  const triggers = await client.query<{ key: string; name: string; def: string }>(`
    SELECT t.tgname || ' on ' || c.relname AS key, t.tgname AS name, pg_get_triggerdef(t.oid) AS def
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal AND t.tgparentid = 0
       AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')`);
  const byKey = (rows: { key: string; name: string; def: string }[]) =>
    new Map(rows.map(({ key, name, def }) => [key, { name, def }]));
  return { functions: byKey(functions.rows), triggers: byKey(triggers.rows) };
}

/**
 * Applies every src definition in one transaction that is rolled back, and returns what differs:
 * names present on one side only, definitions the src version changes, definitions that fail to apply.
 */
async function compareRules(client: pg.Client, sources: RuleSource[]): Promise<string[]> {
  const differences: string[] = [];
  const before = await readCatalog(client);
  const srcFunctions = new Map<string, string>();
  const srcTriggers = new Map<string, string>();
  for (const { file, rules } of sources) {
    for (const { name } of rules.functions) {
      if (srcFunctions.has(name))
        differences.push(`function ${name}: defined twice (${srcFunctions.get(name)}, ${file})`);
      srcFunctions.set(name, file);
    }
    for (const { name, table } of rules.triggers) {
      const key = `${name} on ${table}`;
      if (srcTriggers.has(key)) differences.push(`trigger ${key}: defined twice (${srcTriggers.get(key)}, ${file})`);
      srcTriggers.set(key, file);
    }
  }
  const dbFunctionNames = new Set([...before.functions.values()].map(({ name }) => name));
  for (const name of dbFunctionNames)
    if (!srcFunctions.has(name)) differences.push(`function ${name}: in the migrated database, in no *.db-rules.ts`);
  for (const [name, file] of srcFunctions)
    if (!dbFunctionNames.has(name)) differences.push(`function ${name}: in ${file}, not in the migrated database`);
  for (const key of before.triggers.keys())
    if (!srcTriggers.has(key)) differences.push(`trigger ${key}: in the migrated database, in no *.db-rules.ts`);
  for (const [key, file] of srcTriggers)
    if (!before.triggers.has(key)) differences.push(`trigger ${key}: in ${file}, not in the migrated database`);

  await client.query('BEGIN');
  try {
    const apply = async (what: string, file: string, statements: string[]) => {
      await client.query('SAVEPOINT rule');
      try {
        for (const statement of statements) await client.query(statement);
        await client.query('RELEASE SAVEPOINT rule');
      } catch (error) {
        await client.query('ROLLBACK TO SAVEPOINT rule');
        differences.push(`${what}: the definition in ${file} does not apply: ${(error as Error).message}`);
      }
    };
    // Functions first: a trigger names its function.
    for (const { file, rules } of sources)
      for (const { name, sql } of rules.functions) await apply(`function ${name}`, file, [sql]);
    for (const { file, rules } of sources)
      for (const { name, table, sql } of rules.triggers)
        await apply(`trigger ${name} on ${table}`, file, [
          `DROP TRIGGER IF EXISTS ${pg.escapeIdentifier(name)} ON ${pg.escapeIdentifier(table)}`,
          sql,
        ]);
    const after = await readCatalog(client);
    for (const [kind, was, now] of [
      ['function', before.functions, after.functions],
      ['trigger', before.triggers, after.triggers],
    ] as const) {
      for (const key of new Set([...was.keys(), ...now.keys()])) {
        const [a, b] = [was.get(key)?.def, now.get(key)?.def];
        if (a === b) continue;
        if (a === undefined) differences.push(`${kind} ${key}: created by its src definition, not by the migrations`);
        else if (b === undefined) differences.push(`${kind} ${key}: dropped by applying the src definitions`);
        else
          differences.push(
            `${kind} ${key}: src definition differs from the migrated database ${firstDifference(a, b)}`,
          );
      }
    }
  } finally {
    await client.query('ROLLBACK');
  }
  return differences;
}

/** The first line that differs, to point at the change in a long body. */
function firstDifference(migrated: string, src: string): string {
  const [a, b] = [migrated.split('\n'), src.split('\n')];
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `at line ${at + 1}: migrations ${JSON.stringify(a[at] ?? '')}, src ${JSON.stringify(b[at] ?? '')}`;
}

describe("The database's functions and triggers", () => {
  let database: string;
  let client: pg.Client;
  let sources: RuleSource[];

  beforeAll(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: databaseUrl(database) });
    await client.connect();
    sources = await loadRuleSources();
  });
  afterAll(async () => {
    await client.end();
    await dropTestDatabase(database);
  });

  it('are exactly the definitions in src/**/*.db-rules.ts', async () => {
    expect(sources.length).toBeGreaterThan(0);
    expect(await compareRules(client, sources)).toEqual([]);
  });

  it('differ, by name, when a definition changes, goes missing or is not in the database', async () => {
    const [changed] = sources.flatMap(({ rules }) => rules.functions);
    const [dropped] = sources.flatMap(({ rules }) => rules.triggers);
    // The body's last line gains a comment: the function's text is no longer the migrated one.
    const changedSql = changed.sql.replace(/\$\$(?![\s\S]*\$\$)/, () => '-- planted\n$$');
    expect(changedSql).not.toBe(changed.sql);
    const planted: RuleSource[] = sources.map(({ file, rules }) => ({
      file,
      rules: {
        functions: rules.functions.map((f) => (f === changed ? { ...f, sql: changedSql } : f)),
        triggers: rules.triggers.filter((t) => t !== dropped),
      },
    }));
    planted.push({
      file: 'src/planted.db-rules.ts',
      rules: {
        functions: [
          {
            name: 'planted_rule',
            sql: 'CREATE OR REPLACE FUNCTION planted_rule() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
          },
        ],
        triggers: [],
      },
    });

    const differences = await compareRules(client, planted);

    expect(differences).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^function ${changed.name}\\(.*\\): src definition differs .*-- planted`)),
        `trigger ${dropped.name} on ${dropped.table}: in the migrated database, in no *.db-rules.ts`,
        'function planted_rule: in src/planted.db-rules.ts, not in the migrated database',
        'function planted_rule(): created by its src definition, not by the migrations',
      ]),
    );
    expect(differences).toHaveLength(4);
    // The comparison ran in a transaction rolled back: the database is as the migrations left it.
    expect(await compareRules(client, sources)).toEqual([]);
  });
});
