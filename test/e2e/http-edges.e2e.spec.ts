import { createTestApp, type TestApp } from '../support/app.js';
import { rasterImage, uploadImage } from '../support/images.js';

const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('HTTP edges: X-Request-ID on every response', () => {
  let t: TestApp;
  let imagePath: string;
  beforeAll(async () => {
    t = await createTestApp();
    const admin = await t.factories.admin();
    const upload = await uploadImage(t, admin.auth, await rasterImage('png', 4, 4), 'dot.png', 'image/png').expect(201);
    imagePath = `/api/v1/images/${upload.body.storage_filename as string}`;
  });
  afterAll(() => t.close());

  const everyKind = () => [
    '/openapi.json',
    '/docs',
    '/docs/swagger-ui.css',
    '/docs/swagger-ui-init.js',
    '/metrics',
    imagePath,
    '/',
    '/api/v1/nope',
    '/api/v2/x',
    '/docs/x',
    '/api/v1/health/basic',
  ];

  it('generates one for the documents, Swagger assets, /metrics, image bytes and 404s', async () => {
    for (const path of everyKind()) {
      const res = await t.http().get(path);
      expect({ path, id: res.headers['x-request-id'] }).toEqual({ path, id: expect.stringMatching(GENERATED_ID) });
    }
  });

  it('echoes a well-formed incoming id on each of them', async () => {
    for (const path of everyKind()) {
      const res = await t.http().get(path).set('X-Request-ID', 'trace-42.a:b_c');
      expect({ path, id: res.headers['x-request-id'] }).toEqual({ path, id: 'trace-42.a:b_c' });
    }
  });

  it('replaces an id that is too long or carries unsafe characters', async () => {
    for (const bad of ['x'.repeat(129), 'a b', 'a/b', 'a"b', '<script>']) {
      const res = await t.http().get('/openapi.json').set('X-Request-ID', bad);
      expect({ bad, id: res.headers['x-request-id'] }).toEqual({ bad, id: expect.stringMatching(GENERATED_ID) });
    }
    const longest = 'y'.repeat(128);
    expect((await t.http().get('/docs').set('X-Request-ID', longest)).headers['x-request-id']).toBe(longest);
  });

  it('never gives two requests the same generated id', async () => {
    const a = await t.http().get('/nope');
    const b = await t.http().get('/nope');
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describe('HTTP edges: unknown routes anywhere are JSON 404s', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const cases: [string, string][] = [
    ['get', '/'],
    ['get', '/api'],
    ['get', '/api/v2/x'],
    ['get', '/docs/x'],
    ['post', '/foo'],
    ['get', '/openapi.json/x'],
    ['delete', '/metrics'],
    ['post', '/docs'],
    ['put', '/api/v1/nope'],
    ['get', '/favicon.ico'],
  ];

  it.each(cases)('%s %s → 404 {"detail":"Not Found"} as application/json', async (method, path) => {
    const res = await (
      t.http() as unknown as Record<
        string,
        (p: string) => Promise<{ status: number; body: unknown; headers: Record<string, string> }>
      >
    )[method](path);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ detail: 'Not Found' });
  });

  it('still serves what is there', async () => {
    await t.http().get('/openapi.json').expect(200);
    await t.http().get('/docs').expect(200);
    await t.http().get('/metrics').expect(200);
    await t.http().get('/api/v1/users/me').expect(401);
  });
});

describe('HTTP edges: Swagger UI over plain HTTP (BEHIND_TLS unset)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('does not ask browsers to upgrade to https nor pin https (no HSTS)', async () => {
    for (const path of ['/docs', '/docs/swagger-ui.css', '/api/v1/nope']) {
      const res = await t.http().get(path).set('Host', 'tracker.internal:3000');
      const csp = res.headers['content-security-policy'] as string;
      expect({ path, csp }).toEqual({ path, csp: expect.stringContaining("script-src 'self'") });
      expect(csp).not.toContain('upgrade-insecure-requests');
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it("keeps the page loadable: the UI and its assets load from the page's own origin", async () => {
    const page = await t.http().get('/docs').set('Host', 'tracker.internal:3000').expect(200);
    expect(page.text).toContain('src="./docs/swagger-ui-init.js"');
    await t.http().get('/docs/swagger-ui-init.js').set('Host', 'tracker.internal:3000').expect(200);
    await t.http().get('/docs/swagger-ui-bundle.js').set('Host', 'tracker.internal:3000').expect(200);
  });
});

describe('HTTP edges: BEHIND_TLS=true', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { BEHIND_TLS: 'true' } });
  });
  afterAll(() => t.close());

  it('sends upgrade-insecure-requests and HSTS', async () => {
    const res = await t.http().get('/docs').expect(200);
    expect(res.headers['content-security-policy']).toContain('upgrade-insecure-requests');
    expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+; includeSubDomains$/);
  });
});
