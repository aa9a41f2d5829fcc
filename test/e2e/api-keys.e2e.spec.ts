import { createHash } from 'node:crypto';
import { API_KEYS, createKey, xApiKey } from '../support/api-keys.js';
import type { TestApp } from '../support/app.js';
import { createTrackerWorld, type TrackerWorld } from '../support/trackers.js';

const KEY_TEXT = /^tps_([a-z0-9]{8})_([A-Za-z0-9]{32,})$/;
const KEY_FIELDS = [
  'client_ids',
  'created_at',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'prefix',
  'revoked_at',
  'scopes',
  'user_id',
];

describe('API keys: management (create, list, get, revoke) and bad input', () => {
  let t: TestApp;
  let w: TrackerWorld;
  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  it('creates a key for the caller and shows its secret once; only the secret’s SHA-256 is stored', async () => {
    const res = await t
      .http()
      .post(API_KEYS)
      .set(w.userA.auth)
      .send({ name: '  ERP sync  ', scopes: ['write', 'read', 'read'], client_ids: [w.clientA.id] })
      .expect(201);
    const [, prefix, secret] = KEY_TEXT.exec(res.body.key as string) ?? [];
    expect(secret).toBeDefined();
    expect(res.body).toMatchObject({
      user_id: w.userA.id,
      name: 'ERP sync',
      prefix,
      scopes: ['read', 'write'],
      client_ids: [w.clientA.id],
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    });
    const shown = await t.http().get(`${API_KEYS}/${res.body.id}`).set(w.userA.auth).expect(200);
    expect(Object.keys(shown.body).sort()).toEqual(KEY_FIELDS);
    const listed = await t.http().get(API_KEYS).set(w.userA.auth).expect(200);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const [row] = await t.db.query(
      `SELECT encode(secret_hash, 'hex') AS hash, row_to_json(k)::text LIKE '%' || $2 || '%' AS holds_secret
         FROM api_keys k WHERE id = $1`,
      [res.body.id, secret],
    );
    expect(row).toEqual({ hash: createHash('sha256').update(secret).digest('hex'), holds_secret: false });
  });

  it('lists own keys for a user, every key for an admin (filter user_id), as a Page', async () => {
    const own = await createKey(t, w.userA.auth, { name: 'mine' });
    const adminKey = await createKey(t, w.admin.auth, { name: 'admin key' });
    const mine = await t.http().get(`${API_KEYS}?limit=1000`).set(w.userA.auth).expect(200);
    expect(mine.body.items.every((k: { user_id: number }) => k.user_id === w.userA.id)).toBe(true);
    expect(mine.body.items.map((k: { id: number }) => k.id)).toContain(own.id);
    expect(mine.body).toMatchObject({ page: 1, size: 1000, total: mine.body.items.length });
    const all = await t.http().get(`${API_KEYS}?limit=1000`).set(w.admin.auth).expect(200);
    expect(all.body.items.map((k: { id: number }) => k.id)).toEqual(expect.arrayContaining([own.id, adminKey.id]));
    const filtered = await t.http().get(`${API_KEYS}?user_id=${w.userA.id}&limit=1000`).set(w.admin.auth).expect(200);
    expect(filtered.body.items.length).toBeGreaterThan(0);
    expect(filtered.body.items.every((k: { user_id: number }) => k.user_id === w.userA.id)).toBe(true);
    // A user filtering by someone else sees nothing of theirs.
    const other = await t.http().get(`${API_KEYS}?user_id=${w.admin.id}`).set(w.userA.auth).expect(200);
    expect(other.body).toEqual({ items: [], total: 0, page: 1, size: 50, pages: 0 });
  });

  it("answers 404 for another user's key to a non-admin; an admin reads and revokes any", async () => {
    const adminKey = await createKey(t, w.admin.auth);
    const userKey = await createKey(t, w.userA.auth);
    const notFound = { detail: 'API key not found' };
    expect((await t.http().get(`${API_KEYS}/${adminKey.id}`).set(w.userA.auth).expect(404)).body).toEqual(notFound);
    expect((await t.http().delete(`${API_KEYS}/${adminKey.id}`).set(w.userA.auth).expect(404)).body).toEqual(notFound);
    expect((await t.http().get(`${API_KEYS}/2147483647`).set(w.admin.auth).expect(404)).body).toEqual(notFound);
    await t.http().get(`${API_KEYS}/${userKey.id}`).set(w.admin.auth).expect(200);
    const revoked = await t.http().delete(`${API_KEYS}/${userKey.id}`).set(w.admin.auth).expect(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    // The other key is untouched.
    await t.http().get('/api/v1/trackers').set(xApiKey(adminKey.key)).expect(200);
  });

  it('revocation is idempotent: a second DELETE keeps the first revoked_at', async () => {
    const key = await createKey(t, w.userA.auth);
    const first = await t.http().delete(`${API_KEYS}/${key.id}`).set(w.userA.auth).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await t.http().delete(`${API_KEYS}/${key.id}`).set(w.userA.auth).expect(200);
    expect(first.body.revoked_at).toEqual(expect.any(String));
    expect(second.body).toEqual(first.body);
  });

  it('an admin creates a key for another user (user_id), who owns it; a non-admin sending user_id gets 403', async () => {
    const forIngest = await createKey(t, w.admin.auth, { user_id: w.ingest.id, scopes: ['ingest'] });
    expect(forIngest.user_id).toBe(w.ingest.id);
    const denied = await t
      .http()
      .post(API_KEYS)
      .set(w.userA.auth)
      .send({ name: 'x', scopes: ['read'], user_id: w.userA.id })
      .expect(403);
    expect(denied.body).toEqual({ detail: 'Not enough permissions' });
    // Any presence of the field counts, null included (it is not read as "myself").
    const nullOwner = await t
      .http()
      .post(API_KEYS)
      .set(w.userA.auth)
      .send({ name: 'x', scopes: ['read'], user_id: null })
      .expect(403);
    expect(nullOwner.body).toEqual({ detail: 'Not enough permissions' });
    // For an admin, null is the admin themselves.
    expect((await createKey(t, w.admin.auth, { user_id: null, scopes: ['read'] })).user_id).toBe(w.admin.id);
    // An ingest account gets its keys from an admin.
    await t
      .http()
      .post(API_KEYS)
      .set(w.ingest.auth)
      .send({ name: 'x', scopes: ['ingest'] })
      .expect(403);
    await t
      .http()
      .post(API_KEYS)
      .send({ name: 'x', scopes: ['read'] })
      .expect(401);
  });

  it.each([
    ['an unknown scope', { scopes: ['read', 'admin'] }, 'scopes'],
    ['empty scopes', { scopes: [] }, 'scopes'],
    ['scopes missing', { scopes: undefined }, 'scopes'],
    ['a name too long', { name: 'n'.repeat(101) }, 'name'],
    ['an empty name', { name: '   ' }, 'name'],
    ['expires_at in the past', { expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
    [
      'expires_at more than 2 years ahead',
      { expires_at: new Date(Date.now() + 740 * 86_400_000).toISOString() },
      'expires_at',
    ],
    ['expires_at not a date', { expires_at: 'tomorrow' }, 'expires_at'],
    ['empty client_ids', { client_ids: [] }, 'client_ids'],
    ['a client id that is not an id', { client_ids: [0] }, 'client_ids'],
    ['an unknown field', { owner: 1 }, 'owner'],
  ])('refuses %s with 422 naming the field', async (_, fields, field) => {
    const res = await t
      .http()
      .post(API_KEYS)
      .set(w.userA.auth)
      .send({ name: 'bad', scopes: ['read'], ...fields })
      .expect(422);
    expect(res.body.detail).toMatch(new RegExp(`^Validation failed: ${field}(\\.\\d+)?: `));
    expect(res.body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(new RegExp(`^${field}`)) })]),
    );
  });

  it('refuses client_ids the owner cannot see (or that do not exist) with 422 naming them', async () => {
    const res = await t
      .http()
      .post(API_KEYS)
      .set(w.userA.auth)
      .send({ name: 'bad', scopes: ['read'], client_ids: [w.clientA.id, w.clientB.id, 2147483647] })
      .expect(422);
    expect(res.body).toEqual({
      detail: `Validation failed: client_ids: must be clients the owner can see (unknown or not visible: ${w.clientB.id}, 2147483647)`,
      errors: [
        {
          field: 'client_ids',
          message: `must be clients the owner can see (unknown or not visible: ${w.clientB.id}, 2147483647)`,
        },
      ],
    });
    // For an admin owner any existing client will do; for a key made for a user, that user's clients count.
    await createKey(t, w.admin.auth, { client_ids: [w.clientB.id] });
    await t
      .http()
      .post(API_KEYS)
      .set(w.admin.auth)
      .send({ name: 'x', scopes: ['read'], user_id: w.userA.id, client_ids: [w.clientB.id] })
      .expect(422);
    const unknownOwner = await t
      .http()
      .post(API_KEYS)
      .set(w.admin.auth)
      .send({ name: 'x', scopes: ['read'], user_id: 2147483647 })
      .expect(422);
    expect(unknownOwner.body.detail).toBe('Validation failed: user_id: no user with id 2147483647');
  });

  it('a path id that is not a positive integer is 422', async () => {
    await t.http().get(`${API_KEYS}/abc`).set(w.userA.auth).expect(422);
    await t.http().delete(`${API_KEYS}/0`).set(w.userA.auth).expect(422);
  });

  it('the OpenAPI document declares the API key scheme beside bearer on the routes a key opens', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(doc.paths['/api/v1/trackers'].get.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.paths['/api/v1/locations/reports'].post.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    for (const [path, method] of [
      ['/api/v1/api-keys', 'post'],
      ['/api/v1/api-keys/{id}', 'delete'],
      ['/api/v1/users/me', 'get'],
      ['/api/v1/users', 'get'],
    ])
      expect([path, doc.paths[path][method].security]).toEqual([path, [{ bearer: [] }]]);
    expect(doc.paths['/api/v1/api-keys'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreatedApiKeyResponse',
    });
  });
});
