import { isDeepStrictEqual } from 'node:util';
import { createTestApp, type TestApp } from '../support/app.js';

interface Schema {
  $ref?: string;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  type?: string;
  minimum?: number;
  maximum?: number;
}
interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
  components?: { parameters?: Record<string, Parameter>; schemas?: Record<string, Schema> };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** Every operation of the document with its parameters ($refs resolved). */
function operations(doc: Document): { route: string; parameters: Parameter[] }[] {
  const resolveParameter = (p: Parameter): Parameter =>
    p.$ref ? doc.components!.parameters![p.$ref.split('/').pop()!] : p;
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({
        route: `${method.toUpperCase()} ${path}`,
        parameters: (op.parameters ?? []).map(resolveParameter),
      })),
  );
}

/**
 * Swagger UI's "Try it out" pre-fills each parameter from its example. An optional query parameter
 * whose example is not its default turns a plain click on Execute into a filtered request (a
 * tracker list of 2 out of 480, analytics as of some past date), so such examples belong in the
 * description. Checked over the whole document, so new routes are covered too.
 */
describe('OpenAPI parameters', () => {
  let t: TestApp;
  let doc: Document;

  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.http().get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => t.close());

  it('no optional query parameter carries an example other than its default', () => {
    const resolveSchema = (s: Schema | undefined): Schema | undefined =>
      s?.$ref ? doc.components?.schemas?.[s.$ref.split('/').pop()!] : s;
    const offenders: string[] = [];
    let checked = 0;
    for (const { route, parameters } of operations(doc)) {
      for (const p of parameters) {
        if (p.in !== 'query' || p.required === true) continue;
        checked++;
        const schema = resolveSchema(p.schema);
        const fallback = schema?.default ?? p.schema?.default;
        const examples = [
          p.example,
          ...Object.values(p.examples ?? {}).map((e) => e.value),
          p.schema?.example,
          ...(p.schema?.examples ?? []),
          schema?.example,
          ...(schema?.examples ?? []),
        ].filter((e) => e !== undefined);
        for (const example of new Set(examples)) {
          if (!isDeepStrictEqual(example, fallback))
            offenders.push(
              `${route} ?${p.name}: example ${JSON.stringify(example)}, default ${JSON.stringify(fallback)}`,
            );
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(offenders).toEqual([]);
  });

  it('every path placeholder is documented once, required, and ids as int4 integers', () => {
    const problems: string[] = [];
    for (const { route, parameters } of operations(doc)) {
      const placeholders = [...route.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const documented = parameters.filter((p) => p.in === 'path');
      const names = documented.map((p) => p.name).sort();
      if (!isDeepStrictEqual(names, placeholders)) problems.push(`${route}: path parameters ${JSON.stringify(names)}`);
      for (const p of documented) {
        if (p.required !== true) problems.push(`${route} {${p.name}}: not required`);
        if (
          /(^|_)id$/.test(p.name) &&
          !(p.schema?.type === 'integer' && p.schema.minimum === 1 && p.schema.maximum === 2_147_483_647)
        ) {
          problems.push(`${route} {${p.name}}: schema ${JSON.stringify(p.schema)}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
