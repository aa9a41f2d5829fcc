import { IncomingMessage, ServerResponse, type Server } from 'node:http';
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

describe('Foundation: errors never leak internals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers 401 Not authenticated with WWW-Authenticate when a protected route has no token', async () => {
    const res = await t.http().get('/api/v1/users/me');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: 'Not authenticated' });
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers 401 Could not validate credentials for a garbage token', async () => {
    const res = await t.http().get('/api/v1/users/me').set('Authorization', 'Bearer not.a.jwt');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: 'Could not validate credentials' });
  });

  it('turns an unexpected database error into a bare 500 with the request id header', async () => {
    const admin = await t.factories.admin();
    await t.db.query('ALTER TABLE revoked_tokens RENAME TO revoked_tokens_moved');
    try {
      const res = await t.http().get('/api/v1/users/me').set(admin.auth).set('X-Request-ID', 'req-500-test');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ detail: 'Internal server error' });
      expect(res.headers['x-request-id']).toBe('req-500-test');
      expect(res.text).not.toMatch(/revoked_tokens|SELECT|at .*\.js|\/work\//);
    } finally {
      await t.db.query('ALTER TABLE revoked_tokens_moved RENAME TO revoked_tokens');
    }
  });

  it('answers a malformed JSON body with 422 in the validation shape', async () => {
    const res = await t
      .http()
      .post('/api/v1/auth/login/json')
      .set('Content-Type', 'application/json')
      .send('{"email": ');
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^Validation failed: body: /);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'malformed JSON' }]);
  });
});

describe('Foundation: OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists each security requirement once per operation', async () => {
    const doc = await t.http().get('/openapi.json').expect(200);
    for (const [path, item] of Object.entries(
      doc.body.paths as Record<string, Record<string, { security?: unknown[] }>>,
    )) {
      for (const [method, op] of Object.entries(item)) {
        const entries = (op.security ?? []).map((e) => JSON.stringify(e));
        expect({ route: `${method} ${path}`, entries }).toEqual({
          route: `${method} ${path}`,
          entries: [...new Set(entries)],
        });
      }
    }
  });

  it("builds requests and responses with Express's prototypes already in place (no prototype swap per request)", async () => {
    const express = t.app.getHttpAdapter().getInstance() as { request: object; response: object };
    const server = t.app.getHttpServer() as Server;
    const seen: { request: boolean; response: boolean; incomingMessage: boolean }[] = [];
    // Runs before Express sees the request.
    const probe = (req: IncomingMessage, res: ServerResponse) =>
      seen.push({
        request: Object.getPrototypeOf(req) === express.request,
        response: Object.getPrototypeOf(res) === express.response,
        incomingMessage: req instanceof IncomingMessage && res instanceof ServerResponse,
      });
    server.prependListener('request', probe);
    try {
      const res = await t.http().get('/api/v1/nope').expect(404);
      expect(res.body).toEqual({ detail: 'Not Found' });
    } finally {
      server.removeListener('request', probe);
    }
    expect(seen).toEqual([{ request: true, response: true, incomingMessage: true }]);
  });
});
