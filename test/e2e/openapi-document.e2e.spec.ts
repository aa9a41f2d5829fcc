import { createTestApp, type TestApp } from '../support/app.js';

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  security?: Json[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Json }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<
    string,
    { content?: Record<string, { schema?: Json; examples?: Record<string, { value: unknown }> }> }
  >;
}
interface Document {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Json & { properties?: Record<string, Json>; required?: string[] }>;
    securitySchemes?: Record<string, Json>;
  };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const WHOLE_NUMBER =
  /^(id|.+_id|total|page|size|pages|.+_count|index|row|width|height|imported|skipped|accepted|duplicates|aggregated|confidence)$/;

function operations(doc: Document): { route: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
  );
}

/** Every (name, schema) pair of the document: component properties and parameters. */
function namedSchemas(doc: Document): { where: string; name: string; schema: Json }[] {
  const fromComponents = Object.entries(doc.components.schemas).flatMap(([component, schema]) =>
    Object.entries(schema.properties ?? {}).map(([name, s]) => ({ where: `${component}.${name}`, name, schema: s })),
  );
  const fromParameters = operations(doc).flatMap(({ route, op }) =>
    (op.parameters ?? []).map((p) => ({ where: `${route} ${p.in} ${p.name}`, name: p.name, schema: p.schema ?? {} })),
  );
  return [...fromComponents, ...fromParameters];
}

/** The component a property refers to: `$ref` itself, or the one of an `allOf` that adds a description. */
function refOf(schema: Json): string | undefined {
  const allOf = schema.allOf as Json[] | undefined;
  return (schema.$ref ?? allOf?.find((s) => typeof s.$ref === 'string')?.$ref) as string | undefined;
}

function walk(value: unknown, visit: (node: Json, path: string) => void, path = ''): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${path}/${i}`));
  else if (typeof value === 'object' && value !== null) {
    visit(value as Json, path);
    for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}/${k}`);
  }
}

/**
 * The document generated clients and contract tests are built from: OpenAPI 3.1 with the types
 * the service really sends and accepts, typed errors everywhere, and no path clashes.
 */
describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http().get('/openapi.json').expect(200)).body as Document;
  });
  afterAll(() => t.close());

  it('is OpenAPI 3.1 served from the root, with no 3.0-only `nullable`', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const nullable: string[] = [];
    walk(doc.components, (node, path) => 'nullable' in node && !path.endsWith('/properties') && nullable.push(path));
    expect(nullable).toEqual([]);
  });

  it('documents ids, counts and page fields as integers, ids with their int4 bounds', () => {
    const wrong = namedSchemas(doc)
      .filter(
        ({ name, schema }) =>
          WHOLE_NUMBER.test(name) &&
          ['number', 'integer'].some((type) => ([] as unknown[]).concat(schema.type).includes(type)),
      )
      .filter(({ name, schema }) => {
        if (!([] as unknown[]).concat(schema.type).includes('integer')) return true;
        return /(^|_)id$/.test(name) && !(schema.minimum === 1 && schema.maximum === 2_147_483_647);
      })
      .map(({ where, schema }) => `${where}: ${JSON.stringify(schema)}`);
    expect(wrong).toEqual([]);
    const report = doc.components.schemas.LocationReportDto.properties!;
    expect(report.accuracy_m.type).toEqual(['number', 'null']);
    expect(report.source.type).toEqual(['string', 'null']);
    expect(doc.components.schemas.UserResponse.properties!.client_list).toMatchObject({
      type: 'array',
      items: { type: 'integer' },
    });
  });

  it('writes nullable references as oneOf with null', () => {
    const nullRef = (target: string) => ({ oneOf: [{ $ref: `#/components/schemas/${target}` }, { type: 'null' }] });
    expect(doc.components.schemas.TrackerResponse.properties!.latest_location).toMatchObject(
      nullRef('TrackerLocationPoint'),
    );
    expect(doc.components.schemas.TrackerDetailResponse.properties!.storage_location).toMatchObject(
      nullRef('TrackerLocationSummary'),
    );
  });

  it('types every 4xx/5xx body as Error or ValidationError, with example detail texts, and lists the errors every route can give', () => {
    const problems: string[] = [];
    const isErrorSchema = (schema: Json | undefined, name: string): boolean =>
      schema?.$ref === `#/components/schemas/${name}` ||
      ((schema?.anyOf as Json[] | undefined) ?? []).some((s) => s.$ref === `#/components/schemas/${name}`);
    // The OsmAnd routes answer every refused input with 400 (their clients resend after any other 4xx).
    const ownRefusal = new Set(['GET /api/v1/ingest/osmand', 'POST /api/v1/ingest/osmand']);
    for (const { route, op } of operations(doc)) {
      const input = !ownRefusal.has(route);
      const expected = [
        '500',
        '503',
        ...((op.parameters?.length || op.requestBody) && input ? ['422'] : []),
        ...(op.requestBody && input ? ['413'] : []),
      ];
      for (const status of expected) if (!op.responses[status]) problems.push(`${route}: no ${status}`);
      if (!input) {
        for (const status of ['413', '415', '422']) if (op.responses[status]) problems.push(`${route}: has ${status}`);
        if (!op.responses['400']) problems.push(`${route}: no 400`);
      }
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const json = response.content?.['application/json'];
        if (!isErrorSchema(json?.schema, status === '422' ? 'ValidationError' : 'Error'))
          problems.push(`${route} ${status}: ${JSON.stringify(json?.schema)}`);
        const details = Object.values(json?.examples ?? {}).map((e) => (e.value as { detail?: unknown }).detail);
        if (details.length === 0 || !details.every((d) => typeof d === 'string'))
          problems.push(`${route} ${status}: no example detail`);
      }
    }
    expect(problems).toEqual([]);
    expect(doc.components.schemas.Error).toMatchObject({
      required: ['detail'],
      properties: { detail: { type: 'string' } },
    });
    expect(doc.components.schemas.ValidationError).toMatchObject({ required: ['detail', 'errors'] });
    const notFound = doc.paths['/api/v1/trackers/{id}'].get.responses['404'].content!['application/json'].examples!;
    expect(Object.values(notFound).map((e) => e.value)).toContainEqual({ detail: 'Tracker not found' });
    const denied = doc.paths['/api/v1/clients'].get.responses['403'].content!['application/json'].examples!;
    expect(Object.values(denied).map((e) => e.value)).toEqual([{ detail: 'Not enough permissions' }]);
  });

  it('declares both conflicts of a tracker write: its name in the run and its device id', () => {
    for (const op of [doc.paths['/api/v1/trackers'].post, doc.paths['/api/v1/trackers/{id}'].put]) {
      const conflicts = Object.values(op.responses['409'].content!['application/json'].examples!).map((e) => e.value);
      expect(conflicts).toEqual([
        { detail: "Tracker 'NAME' already exists in production run ID" },
        { detail: "Device id 'DEVICE' is already in use" },
      ]);
    }
  });

  it('states security on every operation: bearer (and an API key where keys may call), or none on the public routes', () => {
    const security = Object.fromEntries(operations(doc).map(({ route, op }) => [route, op.security]));
    expect(Object.entries(security).filter(([, s]) => s === undefined)).toEqual([]);
    expect(security['POST /api/v1/auth/login']).toEqual([]);
    expect(security['GET /api/v1/images/{storage_name}.{extension}']).toEqual([]);
    expect(security['GET /api/v1/trackers']).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(security['GET /api/v1/users/me']).toEqual([{ bearer: [] }]);
    expect(security['GET /api/v1/notifications/stream']).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(security['POST /api/v1/notifications/stream-ticket']).toEqual([{ bearer: [] }, { apiKey: [] }]);
  });

  it('declares both security schemes: a bearer JWT and an API key header', () => {
    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
  });

  it('declares every webhook payload under `webhooks`: one POST per event type, signed headers, references resolving', () => {
    const webhooks = doc.webhooks ?? {};
    const types = ['tracker.status_changed', 'tracker.alert_opened', 'tracker.alert_resolved', 'webhook.test'];
    expect(Object.keys(webhooks).sort()).toEqual([...types].sort());
    const resolve = (ref: string) => {
      const [, , , name] = ref.split('/');
      expect([ref, ref.startsWith('#/components/schemas/') && doc.components.schemas[name] !== undefined]).toEqual([
        ref,
        true,
      ]);
      return doc.components.schemas[name];
    };
    for (const type of types) {
      const op = webhooks[type].post;
      expect([type, op.security]).toEqual([type, []]);
      expect(op.parameters?.filter((p) => p.in === 'header' && p.required).map((p) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      const body = resolve(op.requestBody!.content['application/json'].schema.$ref as string);
      expect([type, body.required]).toEqual([type, expect.arrayContaining(['type', 'timestamp', 'data'])]);
      expect([type, body.properties!.type.enum]).toEqual([type, expect.arrayContaining([type])]);
      expect([type, refOf(body.properties!.data)]).toEqual([type, expect.stringMatching(/^#\/components\/schemas\//)]);
      // Every reference the payload reaches, transitively, names a component of the document.
      const seen = new Set<string>();
      const follow = (schema: Json) =>
        walk(schema, (node) => {
          if (typeof node.$ref !== 'string' || seen.has(node.$ref)) return;
          seen.add(node.$ref);
          follow(resolve(node.$ref));
        });
      follow(op.requestBody!.content['application/json'].schema);
      expect(seen.size).toBeGreaterThan(1);
    }
    const alert = resolve(
      webhooks['tracker.alert_opened'].post.requestBody!.content['application/json'].schema.$ref as string,
    );
    expect(resolve(refOf(alert.properties!.data)!).properties).toHaveProperty('alert');
  });

  it('puts no defaults in request bodies: only the fields without one are required', () => {
    const defaults: string[] = [];
    const seen = new Set<string>();
    const visit = (schema: unknown, where: string): void =>
      walk(schema, (node, path) => {
        if ('default' in node) defaults.push(`${where}${path}`);
        const target = typeof node.$ref === 'string' ? node.$ref.split('/').pop()! : undefined;
        if (target && !seen.has(target)) {
          seen.add(target);
          visit(doc.components.schemas[target], target);
        }
      });
    for (const { route, op } of operations(doc))
      for (const media of Object.values(op.requestBody?.content ?? {})) visit(media.schema, route);
    expect(defaults).toEqual([]);
    expect(doc.components.schemas.CreateTrackerDto.required?.sort()).toEqual(['name', 'production_run_id']);
    expect(doc.components.schemas.UpdateUserDto.required ?? []).toEqual([]);
    // A create states the server's default in words; an update changes only what it sends.
    expect(doc.components.schemas.CreateTrackerDto.properties!.status.description).toBe('Default: `"CREATED"`.');
    expect(doc.components.schemas.UpdateUserDto.properties!.roles.description).toBeUndefined();
  });

  it('has readable, unique operationIds and no two paths that differ only in parameter names', () => {
    const ids = operations(doc).map(({ op }) => op.operationId ?? '');
    expect(ids.filter((id) => !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['trackersList', 'trackersCreate', 'imagesUpload', 'authLoginJson']));
    const shapes = Object.keys(doc.paths).map((path) => path.replace(/\{[^}]+\}/g, '{}'));
    expect(shapes.filter((shape, i) => shapes.indexOf(shape) !== i)).toEqual([]);
  });
});

/** The e2e harness checks every JSON response against the document (test/support/openapi-responses.ts). */
describe('OpenAPI response check', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('checks the responses the tests receive, and accepts null where the document allows it', async () => {
    const admin = await t.factories.admin();
    const tracker = await t.factories.tracker();
    const before = t.responses.checked;
    const list = await t.http().get('/api/v1/trackers?include_latest_location=true').set(admin.auth).expect(200);
    const detail = await t.http().get(`/api/v1/trackers/${tracker.id}`).set(admin.auth).expect(200);
    expect(t.responses.checked).toBe(before + 2);
    // No reports and not in storage: the nullable references are null, and that is documented.
    expect(list.body.items[0].latest_location).toBeNull();
    expect(detail.body.storage_location).toBeNull();
    expect(t.responses.violations).toEqual([]);
  });

  it('names the route, status and field of a body that does not fit', () => {
    const item = {
      id: 1.5,
      name: 'T',
      production_run_id: 1,
      status: 'CREATED',
      storage_location_id: null,
      delivery_location_id: null,
      notes: null,
      device_id: null,
      created_at: '2026-03-01T10:00:00.000Z',
      updated_at: '2026-03-01T10:00:00.000Z',
      latest_location: null,
    };
    const page = { items: [item], total: 1, page: 1, size: 50, pages: 1 };
    expect(t.responses.problemWith('GET', '/api/v1/trackers', 200, page)).toMatch(
      /documented as GET \/api\/v1\/trackers\).*\/items\/0\/id must be integer/,
    );
    expect(t.responses.problemWith('GET', '/api/v1/trackers/7', 404, { detail: 'Tracker not found' })).toBeUndefined();
    expect(t.responses.problemWith('GET', '/api/v1/trackers/7', 404, { message: 'x' })).toMatch(
      /must have required property 'detail'/,
    );
    expect(t.responses.problemWith('GET', '/api/v1/trackers/status-counts', 418, { detail: 'x' })).toMatch(
      /GET \/api\/v1\/trackers\/status-counts\).*status 418 is not documented/,
    );
    expect(t.responses.problemWith('GET', '/api/v1/no-such-route', 404, { detail: 'Not Found' })).toBeUndefined();
  });
});
