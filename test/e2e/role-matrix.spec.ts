import type { Role } from '../../src/users/entities/user.entity.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { concretePath, type RoleMatrixRow } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';

export type { RoleMatrixRow } from '../support/auth.js';

/**
 * Contract §1 role matrix, table-driven: one row per route (method, OpenAPI path, roles that may
 * call it, optional JSON body). For each row: no token → 401 "Not authenticated"; a role not
 * listed → 403 "Not enough permissions"; a listed role → anything but an authentication or
 * permission failure. Path ids default to one that does not exist and bodies are empty or
 * invalid, so allowed callers get 404/422 and the table never changes data.
 *
 * To add a module: append its rows below and its path prefix to COVERED_PREFIXES — the coverage
 * test then fails for any route under that prefix that has no row.
 */
const ROWS: RoleMatrixRow[] = [
  // auth (public: no token needed, a bad one is ignored)
  { method: 'post', path: '/api/v1/auth/login', allowed: 'public', body: {} },
  { method: 'post', path: '/api/v1/auth/login/json', allowed: 'public', body: {} },
  { method: 'post', path: '/api/v1/auth/refresh', allowed: 'public', body: {} },
  { method: 'get', path: '/api/v1/auth/refresh-cookie', allowed: 'public' },
  { method: 'post', path: '/api/v1/auth/logout', allowed: 'public' },
  // users
  { method: 'get', path: '/api/v1/users/me', allowed: ['admin', 'user', 'ingest'] },
  { method: 'patch', path: '/api/v1/users/me', allowed: ['admin', 'user', 'ingest'], body: {} },
  { method: 'get', path: '/api/v1/users', allowed: ['admin'] },
  { method: 'post', path: '/api/v1/users', allowed: ['admin'], body: {} },
  { method: 'get', path: '/api/v1/users/{id}', allowed: ['admin'] },
  { method: 'patch', path: '/api/v1/users/{id}', allowed: ['admin'], body: {} },
  { method: 'delete', path: '/api/v1/users/{id}', allowed: ['admin'] },
];

/** Path prefixes whose every route must have a row. */
const COVERED_PREFIXES = ['/api/v1/auth', '/api/v1/users'];

const ROLES: Role[] = ['admin', 'user', 'ingest'];
const AUTH_FAILURES = ['Not authenticated', 'Could not validate credentials', 'Not enough permissions'];

describe('Role matrix (contract §1)', () => {
  let t: TestApp;
  const callers = {} as Record<Role, CreatedUser>;

  beforeAll(async () => {
    t = await createTestApp();
    const client = await t.factories.client();
    callers.admin = await t.factories.admin();
    callers.user = await t.factories.user({ clients: [client.id] });
    callers.ingest = await t.factories.ingest();
  });
  afterAll(() => t.close());

  const send = (row: RoleMatrixRow, headers: Record<string, string>) => {
    const req = t.http()[row.method](concretePath(row)).set(headers);
    return row.body === undefined ? req : req.send(row.body);
  };

  it.each(ROWS.map((row) => [`${row.method.toUpperCase()} ${row.path}`, row] as const))('%s', async (_name, row) => {
    if (row.allowed === 'public') {
      for (const headers of [{}, { Authorization: 'Bearer not-a-valid-token' }] as Record<string, string>[]) {
        const res = await send(row, headers);
        expect(AUTH_FAILURES).not.toContain(res.body?.detail);
        expect(res.status).not.toBe(403);
        expect(res.status).toBeLessThan(500);
      }
      return;
    }
    const anonymous = await send(row, {});
    expect([anonymous.status, anonymous.body]).toEqual([401, { detail: 'Not authenticated' }]);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');

    for (const role of ROLES) {
      const res = await send(row, callers[role].auth);
      if (row.allowed.includes(role)) {
        expect({ role, status: res.status }).not.toEqual({ role, status: 401 });
        expect({ role, status: res.status }).not.toEqual({ role, status: 403 });
        expect(res.status).toBeLessThan(500);
        expect(AUTH_FAILURES).not.toContain(res.body?.detail);
      } else {
        expect({ role, status: res.status, body: res.body }).toEqual({ role, status: 403, body: { detail: 'Not enough permissions' } });
      }
    }
  });

  it('has a row for every documented route under the covered prefixes, and no row for a route that does not exist', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .filter(([path]) => COVERED_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const rows = ROWS.filter((row) => COVERED_PREFIXES.some((prefix) => row.path === prefix || row.path.startsWith(`${prefix}/`)))
      .map((row) => `${row.method.toUpperCase()} ${row.path}`)
      .sort();
    expect(rows).toEqual(documented);
    const all = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    expect(ROWS.map((row) => `${row.method.toUpperCase()} ${row.path}`).filter((r) => !all.has(r))).toEqual([]);
  });
});
