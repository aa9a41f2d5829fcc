import fc from 'fast-check';
import { createTestApp, type TestApp } from '../support/app.js';

/**
 * OpenAPI-driven fuzzing: every documented operation gets random and malformed path, query and
 * body values, as an admin and as a scoped user. The service must never answer 5xx, never show a
 * stack trace or SQL, and never hang.
 */
interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  queryNames: string[];
}

const STACK_OR_SQL = /\bat \S+ \(|node_modules|\/work\/|QueryFailedError|SELECT .* FROM|syntax error at/i;
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 12);

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('0', '-1', '1.5', '99999999999', '2147483648', '1e3', 'NaN', 'null', 'true', '../etc/passwd', '%00', '\u0000', ' ', '', '1,2,,x', "' OR 1=1 --", '<svg onload=1>', '9'.repeat(400)),
  fc.integer().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);
const hostileValue = fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(hostileString, { maxLength: 3 }));
const hostileBody = fc.oneof(
  fc.dictionary(fc.constantFrom('name', 'email', 'password', 'status', 'production_run_id', 'reports', 'tracker_id', 'timestamp', 'latitude', 'longitude', 'confidence', 'roles', 'client_list', 'brand_id', 'client_id', 'description', 'start_date', 'end_date', 'refresh_token', 'notes', 'storage_location_id', 'delivery_location_id', 'username'), hostileValue, { maxKeys: 6 }),
  fc.anything({ maxDepth: 2 }),
);

function operations(doc: { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      ops.push({ method: method as Operation['method'], path, queryNames: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name) });
    }
  }
  return ops;
}

describe('fuzzing every documented route', () => {
  let t: TestApp;
  let ops: Operation[];
  let adminId: number;
  let userId: number;

  beforeAll(async () => {
    t = await createTestApp();
    const client = await t.factories.client();
    const run = await t.factories.run({ clientId: client.id });
    for (let i = 0; i < 3; i++) await t.factories.tracker({ runId: run.id });
    adminId = (await t.factories.admin()).id;
    userId = (await t.factories.user({ clients: [client.id] })).id;
    const doc = await t.http().get('/openapi.json').expect(200);
    ops = operations(doc.body);
  });
  afterAll(() => t.close());

  it('documents the routes it fuzzes', () => {
    expect(ops.length).toBeGreaterThan(0);
  });

  it('never answers 5xx, leaks internals or hangs', async () => {
    const failures: string[] = [];
    for (const op of ops) {
      await fc.assert(
        fc.asyncProperty(
          fc.array(hostileString, { minLength: 3, maxLength: 3 }),
          fc.dictionary(fc.constantFrom(...(op.queryNames.length ? op.queryNames : ['x'])), hostileString, { maxKeys: 4 }),
          hostileBody,
          fc.boolean(),
          async (pathValues, query, body, asAdmin) => {
            let i = 0;
            const url = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(pathValues[i++ % pathValues.length] || 'x'));
            const token = t.tokenFor(asAdmin ? adminId : userId);
            let req = t.http()[op.method](url).query(query).set('Authorization', `Bearer ${token}`).timeout(10_000);
            if (op.method !== 'get' && op.method !== 'delete') req = req.send(body as object);
            const res = await req;
            if (res.status >= 500 || STACK_OR_SQL.test(res.text)) {
              failures.push(`${op.method.toUpperCase()} ${url}?${new URLSearchParams(query as Record<string, string>)} → ${res.status} ${res.text.slice(0, 200)}`);
              return false;
            }
            return true;
          },
        ),
        { numRuns: RUNS_PER_OPERATION, seed: Number(process.env.FUZZ_SEED ?? 20261121) },
      ).catch(() => undefined);
    }
    expect(failures).toEqual([]);
  });
});
