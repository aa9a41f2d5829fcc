import { randomUUID } from 'node:crypto';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import { createScopeProbeApp, loginJson } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';
import { withinBound } from '../support/eventually.js';

const USERS = '/api/v1/users';
const ME = '/api/v1/users/me';
const NOT_FOUND = { detail: 'User not found' };
const DUPLICATE = { detail: 'A user with this email already exists' };
const USER_KEYS = [
  'client_list',
  'created_at',
  'email',
  'id',
  'is_active',
  'name',
  'notification_preferences',
  'roles',
];
const fields = (res: { body: { errors?: { field: string }[] } }) => [
  ...new Set((res.body.errors ?? []).map((e) => e.field)),
];
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@Example.com`;

describe('Users', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let clientA: number;
  let clientB: number;

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin'));
    clientA = (await t.factories.client()).id;
    clientB = (await t.factories.client()).id;
  });
  afterAll(() => t.close());

  describe('GET/PATCH /users/me', () => {
    it('returns the caller for every role, without any password field', async () => {
      for (const caller of [admin, await t.factories.user({ clients: [clientA] }), await t.factories.ingest()]) {
        const res = await t.http().get(ME).set(caller.auth).expect(200);
        expect(Object.keys(res.body).sort()).toEqual(USER_KEYS);
        expect(res.body).toMatchObject({ id: caller.id, email: caller.email, is_active: true });
      }
    });

    it('changes name and notification preferences (partially)', async () => {
      const me = await t.factories.user();
      const res = await t
        .http()
        .patch(ME)
        .set(me.auth)
        .send({ name: '  New Name  ', notification_preferences: { ui: false } })
        .expect(200);
      expect(res.body).toMatchObject({ name: 'New Name', notification_preferences: { email: true, ui: false } });
      expect((await t.http().get(ME).set(me.auth).expect(200)).body.notification_preferences).toEqual({
        email: true,
        ui: false,
      });
    });

    it('refuses fields a user may not change on themselves (roles, email, client_list, is_active)', async () => {
      const me = await t.factories.user({ clients: [clientA] });
      for (const body of [
        { roles: ['admin'] },
        { client_list: [clientA, clientB] },
        { email: 'x@example.com' },
        { is_active: false },
      ]) {
        const res = await t.http().patch(ME).set(me.auth).send(body).expect(422);
        expect(fields(res)).toEqual(Object.keys(body));
      }
      const [row] = await t.db.query('SELECT roles, client_list, email, is_active FROM users WHERE id = $1', [me.id]);
      expect(row).toEqual({ roles: ['user'], client_list: [clientA], email: me.email, is_active: true });
    });

    it('changes the password only with the right current_password', async () => {
      const me = await t.factories.user();
      const missing = await t.http().patch(ME).set(me.auth).send({ password: 'brand-new-pass' }).expect(422);
      expect(fields(missing)).toEqual(['current_password']);
      const wrong = await t
        .http()
        .patch(ME)
        .set(me.auth)
        .send({ password: 'brand-new-pass', current_password: 'not-it-at-all' })
        .expect(400);
      expect(wrong.body).toEqual({ detail: 'Current password is incorrect' });
      const short = await t
        .http()
        .patch(ME)
        .set(me.auth)
        .send({ password: 'short', current_password: me.password })
        .expect(422);
      expect(fields(short)).toEqual(['password']);
      await t.http().post('/api/v1/auth/login/json').send({ email: me.email, password: 'brand-new-pass' }).expect(401);

      const ok = await t
        .http()
        .patch(ME)
        .set(me.auth)
        .send({ password: 'brand-new-pass', current_password: me.password })
        .expect(200);
      expect(JSON.stringify(ok.body)).not.toMatch(/brand-new-pass|argon2|password/);
      await loginJson(t, me.email, 'brand-new-pass');
      await t.http().post('/api/v1/auth/login/json').send({ email: me.email, password: me.password }).expect(401);
    });
  });

  describe('notification_preferences of the wrong shape', () => {
    const shapes: [string, unknown, string, string][] = [
      ['ui null', { ui: null }, 'notification_preferences.ui', 'ui must be a boolean value'],
      ['email null', { email: null }, 'notification_preferences.email', 'email must be a boolean value'],
      ['null', null, 'notification_preferences', 'notification_preferences must be an object'],
      ['an array', [], 'notification_preferences', 'notification_preferences must be an object'],
      [
        'an array of objects',
        [{ ui: false }],
        'notification_preferences',
        'notification_preferences must be an object',
      ],
      ['a boolean', true, 'notification_preferences', 'notification_preferences must be an object'],
    ];

    it.each(shapes)(
      '%s → 422 naming the field on PATCH /users/me and /users/{id}; nothing changes',
      async (_, value, field, message) => {
        const target = await t.factories.user();
        for (const [url, auth] of [
          [ME, target.auth],
          [`${USERS}/${target.id}`, admin.auth],
        ] as const) {
          const res = await t.http().patch(url).set(auth).send({ notification_preferences: value });
          expect([url, res.status, res.body]).toEqual([
            url,
            422,
            { detail: `Validation failed: ${field}: ${message}`, errors: [{ field, message }] },
          ]);
        }
        const [row] = await t.db.query('SELECT notify_email, notify_ui FROM users WHERE id = $1', [target.id]);
        expect(row).toEqual({ notify_email: true, notify_ui: true });
      },
    );

    it('PATCH /users/{id} refuses null for a field without a default (name, email, password)', async () => {
      const target = await t.factories.user();
      for (const field of ['name', 'email', 'password']) {
        const res = await t
          .http()
          .patch(`${USERS}/${target.id}`)
          .set(admin.auth)
          .send({ [field]: null });
        expect([field, res.status, fields(res)[0]]).toEqual([field, 422, field]);
      }
    });

    it('POST /users refuses the same shapes', async () => {
      for (const [, value, field, message] of shapes) {
        const res = await t
          .http()
          .post(USERS)
          .set(admin.auth)
          .send({ name: 'Shape', email: email('shape'), password: 'secret-password', notification_preferences: value });
        expect([value, res.status, res.body.errors]).toEqual([value, 422, [{ field, message }]]);
      }
    });
  });

  describe('admin management', () => {
    it('creates a user: 201, e-mail normalized, password stored as an argon2id hash and never returned', async () => {
      const address = email('Created');
      const res = await t
        .http()
        .post(USERS)
        .set(admin.auth)
        .send({
          name: 'Created',
          email: ` ${address} `,
          password: 'secret-password',
          roles: ['user', 'ingest'],
          client_list: [clientB, clientA, clientA],
        })
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual(USER_KEYS);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Created',
        email: address.toLowerCase(),
        roles: ['user', 'ingest'],
        client_list: [clientA, clientB].sort((a, b) => a - b),
        notification_preferences: { email: true, ui: true },
        is_active: true,
        created_at: expect.stringMatching(/Z$/),
      });
      const [row] = await t.db.query('SELECT password_hash FROM users WHERE id = $1', [res.body.id]);
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      await loginJson(t, address, 'secret-password');
    });

    it('defaults roles to ["user"] and client_list to [] and honours is_active / notification_preferences', async () => {
      const res = await t
        .http()
        .post(USERS)
        .set(admin.auth)
        .send({
          name: 'Defaults',
          email: email('defaults'),
          password: 'secret-password',
          is_active: false,
          notification_preferences: { email: false },
        })
        .expect(201);
      expect(res.body).toMatchObject({
        roles: ['user'],
        client_list: [],
        is_active: false,
        notification_preferences: { email: false, ui: true },
      });
    });

    it('answers 409 for a duplicate e-mail in any case, on create and on update', async () => {
      const address = email('dup');
      await t
        .http()
        .post(USERS)
        .set(admin.auth)
        .send({ name: 'A', email: address, password: 'secret-password' })
        .expect(201);
      const res = await t
        .http()
        .post(USERS)
        .set(admin.auth)
        .send({ name: 'B', email: address.toUpperCase(), password: 'secret-password' })
        .expect(409);
      expect(res.body).toEqual(DUPLICATE);
      const other = await t.factories.user();
      const patch = await t
        .http()
        .patch(`${USERS}/${other.id}`)
        .set(admin.auth)
        .send({ email: address.toUpperCase() })
        .expect(409);
      expect(patch.body).toEqual(DUPLICATE);
    });

    it.each([
      ['short password', { password: 'short7c' }, 'password'],
      ['missing password', { password: undefined }, 'password'],
      ['bad e-mail', { email: 'not-an-email' }, 'email'],
      ['empty name', { name: '   ' }, 'name'],
      ['unknown role', { roles: ['superuser'] }, 'roles'],
      ['empty roles', { roles: [] }, 'roles'],
      ['roles not an array', { roles: 'admin' }, 'roles'],
      ['client id 0', { client_list: [0] }, 'client_list'],
      ['negative client id', { client_list: [-3] }, 'client_list'],
      ['non-integer client id', { client_list: ['1'] }, 'client_list'],
      ['fractional client id', { client_list: [1.5] }, 'client_list'],
      ['unknown client id', { client_list: [2_147_483_000] }, 'client_list'],
      [
        'notification_preferences not boolean',
        { notification_preferences: { email: 'yes' } },
        'notification_preferences.email',
      ],
      ['unknown field', { password_hash: 'x' }, 'password_hash'],
    ])('refuses %s with 422 naming the field, creating nothing', async (_name, override, field) => {
      const address = email('invalid');
      const res = await t
        .http()
        .post(USERS)
        .set(admin.auth)
        .send({ name: 'Invalid', email: address, password: 'secret-password', ...override })
        .expect(422);
      expect(fields(res)).toEqual([field]);
      expect(res.body.detail).toMatch(new RegExp(`^Validation failed: ${field.replace('.', '\\.')}: `));
      expect(await t.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [address])).toHaveLength(0);
    });

    it('lists users as a Page', async () => {
      const [{ n }] = await t.db.query('SELECT count(*)::int AS n FROM users');
      const res = await t.http().get(USERS).query({ skip: 1, limit: 2 }).set(admin.auth).expect(200);
      expect(res.body).toEqual({ items: expect.any(Array), total: n, page: 1, size: 2, pages: Math.ceil(n / 2) });
      expect(res.body.items).toHaveLength(2);
      const ids = (await t.db.query('SELECT id FROM users ORDER BY id OFFSET 1 LIMIT 2')).map(
        (r: { id: number }) => r.id,
      );
      expect(res.body.items.map((u: { id: number }) => u.id)).toEqual(ids);
      expect(Object.keys(res.body.items[0]).sort()).toEqual(USER_KEYS);
      await t.http().get(USERS).query({ limit: 0 }).set(admin.auth).expect(422);
      await t.http().get(USERS).query({ skip: -1 }).set(admin.auth).expect(422);
    });

    it('gets, updates and deletes by id; 404 "User not found" when missing, 422 for a bad id', async () => {
      const target = await t.factories.user();
      expect((await t.http().get(`${USERS}/${target.id}`).set(admin.auth).expect(200)).body.email).toBe(target.email);
      const updated = await t
        .http()
        .patch(`${USERS}/${target.id}`)
        .set(admin.auth)
        .send({ name: 'Renamed', password: 'admin-set-pass', notification_preferences: { email: false, ui: false } })
        .expect(200);
      expect(updated.body).toMatchObject({
        id: target.id,
        name: 'Renamed',
        notification_preferences: { email: false, ui: false },
      });
      await loginJson(t, target.email, 'admin-set-pass');

      const deleted = await t.http().delete(`${USERS}/${target.id}`).set(admin.auth).expect(200);
      expect(deleted.body).toMatchObject({ id: target.id, name: 'Renamed', email: target.email });
      expect(Object.keys(deleted.body).sort()).toEqual(USER_KEYS);
      for (const method of ['get', 'patch', 'delete'] as const) {
        const res = await t.http()[method](`${USERS}/${target.id}`).set(admin.auth).send({}).expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      expect((await t.http().get(`${USERS}/abc`).set(admin.auth).expect(422)).body.errors).toEqual([
        { field: 'id', message: expect.any(String) },
      ]);
      await t.http().get(`${USERS}/0`).set(admin.auth).expect(422);
      // The deleted user's token is dead.
      await t.http().get(ME).set(target.auth).expect(401);
    });
  });

  describe('changes take effect on the next request with an old token', () => {
    it('role change: promoted user gets admin routes, demoted admin loses them', async () => {
      const target = await t.factories.user();
      await t.http().get(USERS).set(target.auth).expect(403);
      await t
        .http()
        .patch(`${USERS}/${target.id}`)
        .set(admin.auth)
        .send({ roles: ['admin'] })
        .expect(200);
      await t.http().get(USERS).set(target.auth).expect(200);
      await t
        .http()
        .patch(`${USERS}/${target.id}`)
        .set(admin.auth)
        .send({ roles: ['ingest'] })
        .expect(200);
      const res = await t.http().get(USERS).set(target.auth).expect(403);
      expect(res.body).toEqual({ detail: 'Not enough permissions' });
    });

    it('deactivation: 401 on the next request, and login refused; reactivation restores logging in, not the old tokens', async () => {
      const target = await t.factories.user();
      await t.http().patch(`${USERS}/${target.id}`).set(admin.auth).send({ is_active: false }).expect(200);
      expect((await t.http().get(ME).set(target.auth).expect(401)).body).toEqual({
        detail: 'Could not validate credentials',
      });
      await t
        .http()
        .post('/api/v1/auth/login/json')
        .send({ email: target.email, password: target.password })
        .expect(401);
      await t.http().patch(`${USERS}/${target.id}`).set(admin.auth).send({ is_active: true }).expect(200);
      // A deactivation revokes every token issued before it: the account is back, its old tokens are not.
      expect((await t.http().get(ME).set(target.auth).expect(401)).body).toEqual({
        detail: 'Could not validate credentials',
      });
      const { access } = await loginJson(t, target.email, target.password);
      await t
        .http()
        .get(ME)
        .set({ Authorization: `Bearer ${access}` })
        .expect(200);
    });

    it('client_list change: a real scoped route (GET /clients/{id}) follows the new list with the old token', async () => {
      const target = await t.factories.user({ clients: [clientA] });
      await t.http().get(`/api/v1/clients/${clientA}`).set(target.auth).expect(200);
      await t.http().get(`/api/v1/clients/${clientB}`).set(target.auth).expect(404);
      await t
        .http()
        .patch(`${USERS}/${target.id}`)
        .set(admin.auth)
        .send({ client_list: [clientB] })
        .expect(200);
      await t.http().get(`/api/v1/clients/${clientA}`).set(target.auth).expect(404);
      await t.http().get(`/api/v1/clients/${clientB}`).set(target.auth).expect(200);
    });

    it('client_list change: the scoping SQL sees the new list with the old token', async () => {
      const probe = await createScopeProbeApp(t);
      // The probe is another app instance: a change made on `t` reaches it within 1 s (its in-process tier).
      const probeSees = async (auth: Record<string, string>, expected: number[]) =>
        (
          await withinBound(
            () => probe.http().get('/api/v1/scope-probe/clients').set(auth).expect(200),
            (res) => JSON.stringify(res.body) === JSON.stringify(expected),
          )
        ).body as number[];
      try {
        const target = await t.factories.user({ clients: [clientA] });
        expect((await probe.http().get('/api/v1/scope-probe/clients').set(target.auth).expect(200)).body).toEqual([
          clientA,
        ]);
        await t
          .http()
          .patch(`${USERS}/${target.id}`)
          .set(admin.auth)
          .send({ client_list: [clientB] })
          .expect(200);
        expect(await probeSees(target.auth, [clientB])).toEqual([clientB]);
        await t.http().patch(`${USERS}/${target.id}`).set(admin.auth).send({ client_list: [] }).expect(200);
        expect(await probeSees(target.auth, [])).toEqual([]);
        // Control: an admin sees every client through the same condition.
        const all = (await t.db.query('SELECT id FROM clients ORDER BY id')).map((r: { id: number }) => r.id);
        expect((await probe.http().get('/api/v1/scope-probe/clients').set(admin.auth).expect(200)).body).toEqual(all);
      } finally {
        await probe.close();
      }
    });
  });

  describe('the last active admin', () => {
    it('cannot be deleted, deactivated or demoted (409); another admin can be', async () => {
      const other = await t.factories.admin();
      await t
        .http()
        .patch(`${USERS}/${other.id}`)
        .set(admin.auth)
        .send({ roles: ['user'] })
        .expect(200);
      await t.db.query("UPDATE users SET is_active = false WHERE 'admin' = ANY(roles) AND id <> $1", [admin.id]);
      for (const [method, body] of [
        ['delete', {}],
        ['patch', { is_active: false }],
        ['patch', { roles: ['user'] }],
      ] as const) {
        const res = await t.http()[method](`${USERS}/${admin.id}`).set(admin.auth).send(body).expect(409);
        expect(res.body).toEqual({ detail: 'Cannot remove the last active admin' });
      }
      await t
        .http()
        .patch(`${USERS}/${admin.id}`)
        .set(admin.auth)
        .send({ roles: ['admin', 'user'], name: 'Still admin' })
        .expect(200);
      await t.http().get(USERS).set(admin.auth).expect(200);
    });
  });

  it('documents every users route in OpenAPI', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths[`${USERS}/{id}`]).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(doc.paths[ME]).sort()).toEqual(['get', 'patch']);
    expect(doc.paths[USERS].post.responses['409']).toBeDefined();
    expect(doc.paths['/api/v1/auth/login'].post.requestBody.content).toHaveProperty(
      'application/x-www-form-urlencoded',
    );
  });
});
