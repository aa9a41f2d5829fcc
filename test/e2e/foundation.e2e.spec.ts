import { createTestApp, type TestApp } from '../support/app.js';

describe('Foundation: HTTP conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serves the OpenAPI document and Swagger UI without a token', async () => {
    const doc = await t.http().get('/openapi.json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(doc.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ui = await t.http().get('/docs').expect(200);
    expect(ui.text).toContain('swagger-ui');
  });

  it('answers unknown routes with 404 {"detail":"Not Found"} and a request id', async () => {
    const res = await t.http().get('/api/v1/nope').expect(404);
    expect(res.body).toEqual({ detail: 'Not Found' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a sane X-Request-ID and replaces an unsafe one', async () => {
    const echoed = await t.http().get('/api/v1/nope').set('X-Request-ID', 'abc-123.x');
    expect(echoed.headers['x-request-id']).toBe('abc-123.x');
    const replaced = await t.http().get('/api/v1/nope').set('X-Request-ID', 'bad id\twith spaces');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets security headers', async () => {
    const res = await t.http().get('/api/v1/nope');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});
