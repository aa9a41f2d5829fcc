import { createTestApp, createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

describe('Metrics access: production without METRICS_TOKEN', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let user: CreatedUser;
  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin', { env: { NODE_ENV: 'production' } }));
    user = await t.factories.user({ roles: ['user'] });
  });
  afterAll(() => t?.close());

  it('is not public: 401 Not authenticated with WWW-Authenticate: Bearer', async () => {
    const res = await t.http().get('/metrics').expect(401);
    expect(res.body).toEqual({ detail: 'Not authenticated' });
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.text).not.toContain('http_request_duration_seconds');
  });

  it('answers 401 Could not validate credentials for a bad token, 403 for a non-admin, 200 for an admin', async () => {
    const bad = await t.http().get('/metrics').set('Authorization', 'Bearer not.a.jwt').expect(401);
    expect(bad.body).toEqual({ detail: 'Could not validate credentials' });
    expect(bad.headers['www-authenticate']).toBe('Bearer');
    const denied = await t.http().get('/metrics').set(user.auth).expect(403);
    expect(denied.body).toEqual({ detail: 'Not enough permissions' });
    const ok = await t.http().get('/metrics').set(admin.auth).expect(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain('# TYPE http_request_duration_seconds histogram');
  });

  it('documents the bearer requirement, 401 and 403 in OpenAPI', async () => {
    const doc = await t.http().get('/openapi.json').expect(200);
    const op = doc.body.paths['/metrics'].get;
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '403']));
  });
});

describe('Metrics access: production with METRICS_TOKEN', () => {
  let t: TestApp;
  const METRICS_TOKEN = 'prod-scrape-secret-0123456789';
  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: 'production', METRICS_TOKEN } });
  });
  afterAll(() => t?.close());

  it('accepts the scrape token and nothing else, an admin token included', async () => {
    expect((await t.http().get('/metrics').expect(401)).body).toEqual({ detail: 'Not authenticated' });
    const admin = await t.factories.admin();
    expect((await t.http().get('/metrics').set(admin.auth).expect(401)).body).toEqual({
      detail: 'Could not validate credentials',
    });
    const extra = await t.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN} junk`).expect(401);
    expect(extra.body).toEqual({ detail: 'Could not validate credentials' });
    const ok = await t.http().get('/metrics').set('Authorization', `bearer ${METRICS_TOKEN}`).expect(200);
    expect(ok.text).toContain('http_request_duration_seconds');
  });
});

describe('Metrics access: outside production without METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: 'development' } });
  });
  afterAll(() => t?.close());

  it('stays open', async () => {
    const res = await t.http().get('/metrics').expect(200);
    expect(res.text).toContain('http_request_duration_seconds');
  });
});
