import { randomUUID } from 'node:crypto';
import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { createPeerApp, createTestApp, createTestAppWithUser, redisAvailable, type TestApp } from '../support/app.js';
import { bearer, decode, loginJson, setCookie } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';
import { withinBound } from '../support/eventually.js';

const LOGIN = '/api/v1/auth/login';
const REFRESH = '/api/v1/auth/refresh';
const REFRESH_COOKIE = '/api/v1/auth/refresh-cookie';
const LOGOUT = '/api/v1/auth/logout';
const ME = '/api/v1/users/me';
const INCORRECT = { detail: 'Incorrect email or password' };
const INVALID_REFRESH = { detail: 'Invalid refresh token' };
const INVALID_CREDENTIALS = { detail: 'Could not validate credentials' };
const SEVEN_DAYS = String(7 * 86400);
/** Distinct field names of a 422's `errors`. */
const fields = (res: { body: { errors?: { field: string }[] } }) => [
  ...new Set((res.body.errors ?? []).map((e) => e.field)),
];

describe('Auth: login, refresh, logout', () => {
  let t: TestApp;
  let user: CreatedUser;

  beforeAll(async () => ({ t, user } = await createTestAppWithUser()));
  afterAll(() => t.close());

  describe('POST /auth/login', () => {
    it('accepts the OAuth2 password form and sets the refresh cookie with the exact attributes', async () => {
      const res = await t
        .http()
        .post(LOGIN)
        .type('form')
        .send({ username: user.email, password: user.password })
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'token_type']);
      expect(res.body.token_type).toBe('bearer');
      expect(res.headers['cache-control']).toBe('no-store');
      const cookie = setCookie(res, 'refresh_token');
      expect(cookie).toBeDefined();
      expect(cookie!.attributes).toEqual({
        'max-age': SEVEN_DAYS,
        path: '/api/v1/auth',
        expires: expect.any(String),
        httponly: '',
        secure: '',
        samesite: 'Lax',
      });
      expect(new Date(cookie!.attributes.expires).getTime()).toBeGreaterThan(Date.now() + 6.9 * 86400_000);

      const access = decode(res.body.access_token);
      expect(access.header).toEqual({ alg: 'HS256', typ: 'JWT' });
      expect(access.payload).toEqual({
        sub: String(user.id),
        token_type: 'access',
        iat: expect.any(Number),
        // The issue time in microseconds (for the per-user token epoch), within the `iat` second.
        iat_us: expect.any(Number),
        exp: (access.payload.iat as number) + 30 * 60,
        iss: 'tracker-pipeline',
        aud: 'tracker-pipeline-api',
        jti: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        // The login's token family (revoked as a whole when a refresh token of it is reused).
        fam: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      });
      expect(Math.floor((access.payload.iat_us as number) / 1e6)).toBe(access.payload.iat);
      const refresh = decode(cookie!.value);
      expect(refresh.payload).toMatchObject({ sub: String(user.id), token_type: 'refresh', fam: access.payload.fam });
      expect(refresh.payload.exp).toBe((refresh.payload.iat as number) + 7 * 86400);
      expect(refresh.payload.jti).not.toBe(access.payload.jti);

      await t.http().get(ME).set(bearer(res.body.access_token)).expect(200);
    });

    it('accepts the OAuth2 extras (grant_type, scope, client_id) that Swagger UI and OAuth2 clients send', async () => {
      await t
        .http()
        .post(LOGIN)
        .type('form')
        .send({
          grant_type: 'password',
          username: user.email,
          password: user.password,
          scope: '',
          client_id: 'swagger',
        })
        .expect(200);
    });

    it('accepts JSON {username, password} and multipart/form-data', async () => {
      const json = await t.http().post(LOGIN).send({ username: user.email, password: user.password }).expect(200);
      expect(json.body.token_type).toBe('bearer');
      const multipart = await t
        .http()
        .post(LOGIN)
        .field('username', user.email)
        .field('password', user.password)
        .expect(200);
      expect(setCookie(multipart, 'refresh_token')).toBeDefined();
      await t.http().get(ME).set(bearer(multipart.body.access_token)).expect(200);
    });

    it('answers 422 naming the missing field in every encoding', async () => {
      const form = await t.http().post(LOGIN).type('form').send({ username: user.email }).expect(422);
      expect(fields(form)).toEqual(['password']);
      const multipart = await t.http().post(LOGIN).field('password', 'x').expect(422);
      expect(fields(multipart)).toEqual(['username']);
      const json = await t.http().post(LOGIN).send({}).expect(422);
      expect(json.body.detail).toMatch(/^Validation failed: .*username.*password/);
      const jsonLogin = await t.http().post(`${LOGIN}/json`).send({ email: user.email }).expect(422);
      expect(fields(jsonLogin)).toEqual(['password']);
    });

    it('refuses a file in a multipart login', async () => {
      const res = await t
        .http()
        .post(LOGIN)
        .field('username', user.email)
        .field('password', user.password)
        .attach('file', Buffer.from('x'), 'x.txt');
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(setCookie(res, 'refresh_token')).toBeUndefined();
    });
  });

  describe('POST /auth/login/json', () => {
    it('returns the token and the user (e-mail matched case-insensitively), and sets the cookie', async () => {
      const res = await t
        .http()
        .post(`${LOGIN}/json`)
        .send({ email: user.email.toUpperCase(), password: user.password })
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'token_type', 'user']);
      expect(res.body.token_type).toBe('bearer');
      expect(res.body.user).toEqual({
        id: user.id,
        name: 'Test User',
        email: user.email,
        roles: ['user'],
        client_list: [],
        notification_preferences: { email: true, ui: true },
        is_active: true,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      expect(setCookie(res, 'refresh_token')?.attributes.httponly).toBe('');
    });
  });

  describe('failed logins', () => {
    it('answers the same 401 for unknown e-mail, wrong password and inactive user, without a cookie', async () => {
      const inactive = await t.factories.user({ isActive: false });
      const attempts = [
        { email: `nobody-${randomUUID()}@example.com`, password: user.password },
        { email: user.email, password: 'wrong-password' },
        { email: inactive.email, password: inactive.password },
      ];
      for (const body of attempts) {
        const res = await t.http().post(`${LOGIN}/json`).send(body).expect(401);
        expect(res.body).toEqual(INCORRECT);
        expect(setCookie(res, 'refresh_token')).toBeUndefined();
        const form = await t
          .http()
          .post(LOGIN)
          .type('form')
          .send({ username: body.email, password: body.password })
          .expect(401);
        expect(form.body).toEqual(INCORRECT);
      }
    });
  });

  describe('refresh', () => {
    it('POST /auth/refresh rotates: new pair in the body and the cookie, the old refresh token is dead', async () => {
      const { refresh } = await loginJson(t, user.email, user.password);
      const res = await t.http().post(REFRESH).send({ refresh_token: refresh }).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'refresh_token', 'token_type']);
      expect(res.body.token_type).toBe('bearer');
      expect(res.body.refresh_token).not.toBe(refresh);
      const cookie = setCookie(res, 'refresh_token');
      expect(cookie?.value).toBe(res.body.refresh_token);
      expect(cookie?.attributes).toMatchObject({
        path: '/api/v1/auth',
        httponly: '',
        samesite: 'Lax',
        secure: '',
        'max-age': SEVEN_DAYS,
      });
      await t.http().get(ME).set(bearer(res.body.access_token)).expect(200);

      // The rotated token works once.
      const next = await t.http().post(REFRESH).send({ refresh_token: res.body.refresh_token }).expect(200);
      const reused = await t.http().post(REFRESH).send({ refresh_token: refresh }).expect(401);
      expect(reused.body).toEqual(INVALID_REFRESH);
      expect(setCookie(reused, 'refresh_token')).toBeUndefined();
      await t.http().post(REFRESH).send({ refresh_token: res.body.refresh_token }).expect(401);
      // A reuse revokes the whole family (auth-refresh-reuse.e2e.spec.ts): the newest pair too.
      await t.http().post(REFRESH).send({ refresh_token: next.body.refresh_token }).expect(401);
    });

    it('lets exactly one of several concurrent refreshes with the same token win', async () => {
      const { refresh } = await loginJson(t, user.email, user.password);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => t.http().post(REFRESH).send({ refresh_token: refresh })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
    });

    it('GET /auth/refresh-cookie returns a new access token and rotates the cookie', async () => {
      const { refresh } = await loginJson(t, user.email, user.password);
      const res = await t.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${refresh}`).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'token_type']);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body.token_type).toBe('bearer');
      const rotated = setCookie(res, 'refresh_token');
      expect(rotated?.value).toBeTruthy();
      expect(rotated?.value).not.toBe(refresh);
      expect(rotated?.attributes).toMatchObject({
        path: '/api/v1/auth',
        httponly: '',
        samesite: 'Lax',
        secure: '',
        'max-age': SEVEN_DAYS,
      });
      await t.http().get(ME).set(bearer(res.body.access_token)).expect(200);

      // The rotated cookie works once, then a reuse of the first one revokes the family, the newest cookie included.
      const next = await t.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${rotated!.value}`).expect(200);
      const reused = await t.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${refresh}`).expect(401);
      expect(reused.body).toEqual(INVALID_REFRESH);
      const newest = setCookie(next, 'refresh_token')!.value;
      await t.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${newest}`).expect(401);
    });

    it('answers 401 "Refresh token missing" without the cookie and "Invalid refresh token" for garbage', async () => {
      const missing = await t.http().get(REFRESH_COOKIE).expect(401);
      expect(missing.body).toEqual({ detail: 'Refresh token missing' });
      const garbage = await t.http().get(REFRESH_COOKIE).set('Cookie', 'refresh_token=not-a-jwt').expect(401);
      expect(garbage.body).toEqual(INVALID_REFRESH);
      const body = await t.http().post(REFRESH).send({ refresh_token: 'not-a-jwt' }).expect(401);
      expect(body.body).toEqual(INVALID_REFRESH);
    });

    it('answers 422 for a refresh request without refresh_token', async () => {
      const res = await t.http().post(REFRESH).send({}).expect(422);
      expect(fields(res)).toEqual(['refresh_token']);
    });

    it('refuses the refresh token of a deactivated user', async () => {
      const victim = await t.factories.user();
      const { refresh } = await loginJson(t, victim.email, victim.password);
      await t.db.query('UPDATE users SET is_active = false WHERE id = $1', [victim.id]);
      const res = await t.http().post(REFRESH).send({ refresh_token: refresh }).expect(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });
  });

  describe('POST /auth/logout', () => {
    it('revokes the cookie refresh token and the bearer access token, and clears the cookie', async () => {
      const { access, refresh } = await loginJson(t, user.email, user.password);
      const res = await t.http().post(LOGOUT).set(bearer(access)).set('Cookie', `refresh_token=${refresh}`).expect(200);
      expect(res.body).toEqual({ detail: 'Successfully logged out' });
      const cleared = setCookie(res, 'refresh_token');
      expect(cleared).toEqual({
        value: '',
        attributes: {
          path: '/api/v1/auth',
          expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
          httponly: '',
          secure: '',
          samesite: 'Lax',
        },
      });

      const denied = await t.http().get(ME).set(bearer(access)).expect(401);
      expect(denied.body).toEqual(INVALID_CREDENTIALS);
      expect(denied.headers['www-authenticate']).toBe('Bearer');
      expect((await t.http().post(REFRESH).send({ refresh_token: refresh }).expect(401)).body).toEqual(INVALID_REFRESH);
      expect((await t.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${refresh}`).expect(401)).body).toEqual(
        INVALID_REFRESH,
      );

      const jtis = [decode(access).payload.jti, decode(refresh).payload.jti];
      const rows = await t.db.query(
        'SELECT jti, expires_at FROM revoked_tokens WHERE jti = ANY($1::uuid[]) ORDER BY expires_at',
        [jtis],
      );
      expect(rows.map((r: { jti: string }) => r.jti)).toEqual(jtis);
      expect(rows[0].expires_at.getTime()).toBe((decode(access).payload.exp as number) * 1000);
    });

    it('never fails: no token, garbage tokens, or an expired access token', async () => {
      const none = await t.http().post(LOGOUT).expect(200);
      expect(none.body).toEqual({ detail: 'Successfully logged out' });
      expect(setCookie(none, 'refresh_token')?.value).toBe('');
      await t
        .http()
        .post(LOGOUT)
        .set('Authorization', 'Bearer garbage')
        .set('Cookie', 'refresh_token=garbage')
        .expect(200);
      await t.http().post(LOGOUT).set('Authorization', 'Basic Zm9vOmJhcg==').expect(200);
    });

    it('revokes only the access token when there is no cookie; the refresh token still works', async () => {
      const { access, refresh } = await loginJson(t, user.email, user.password);
      await t.http().post(LOGOUT).set(bearer(access)).expect(200);
      await t.http().get(ME).set(bearer(access)).expect(401);
      await t.http().post(REFRESH).send({ refresh_token: refresh }).expect(200);
    });

    it('keeps revocations after a cache flush and on a fresh instance over the same database', async () => {
      const { access } = await loginJson(t, user.email, user.password);
      await t.http().get(ME).set(bearer(access)).expect(200); // also caches "not revoked"
      await t.http().post(LOGOUT).set(bearer(access)).expect(200);
      const jti = decode(access).payload.jti as string;
      await t.app.get(CacheService).del(`revoked:${jti}`);
      expect((await t.http().get(ME).set(bearer(access)).expect(401)).body).toEqual(INVALID_CREDENTIALS);

      const other = await createTestApp({ database: t.database, cachePrefix: `fresh-${randomUUID()}` });
      try {
        // The other instance hears of the revocation within 1 s (its in-process tier).
        const onOther = await withinBound(
          () => other.http().get(ME).set(bearer(access)),
          (res) => res.status === 401,
        );
        expect([onOther.status, onOther.body]).toEqual([401, INVALID_CREDENTIALS]);
        const { access: fresh } = await loginJson(t, user.email, user.password);
        await other.http().get(ME).set(bearer(fresh)).expect(200);
      } finally {
        await other.close();
      }
      // Each app authenticates with its own strategy: closing the other one leaves this one working.
      const { access: after } = await loginJson(t, user.email, user.password);
      await t.http().get(ME).set(bearer(after)).expect(200);
    });
  });

  (redisAvailable ? it : it.skip)(
    'revokes at once on every instance sharing Redis, even one that cached "not revoked"',
    async () => {
      const other = await createPeerApp(t);
      try {
        const { access } = await loginJson(t, user.email, user.password);
        await other.http().get(ME).set(bearer(access)).expect(200); // caches "not revoked" in the shared store
        await t.http().post(LOGOUT).set(bearer(access)).expect(200);
        // The other instance hears of the revocation within 1 s (its in-process tier).
        const onOther = await withinBound(
          () => other.http().get(ME).set(bearer(access)),
          (res) => res.status === 401,
        );
        expect([onOther.status, onOther.body]).toEqual([401, INVALID_CREDENTIALS]);
      } finally {
        await other.close();
      }
    },
  );

  describe('in development', () => {
    it('drops Secure from the cookie (set and clear) and follows REFRESH_TOKEN_EXPIRE_DAYS', async () => {
      const dev = await createPeerApp(t, { env: { NODE_ENV: 'development', REFRESH_TOKEN_EXPIRE_DAYS: '2' } });
      try {
        const res = await dev
          .http()
          .post(LOGIN)
          .type('form')
          .send({ username: user.email, password: user.password })
          .expect(200);
        expect(setCookie(res, 'refresh_token')?.attributes).toEqual({
          'max-age': String(2 * 86400),
          path: '/api/v1/auth',
          expires: expect.any(String),
          httponly: '',
          samesite: 'Lax',
        });
        const out = await dev.http().post(LOGOUT).expect(200);
        expect(setCookie(out, 'refresh_token')?.attributes).toEqual({
          path: '/api/v1/auth',
          expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
          httponly: '',
          samesite: 'Lax',
        });
      } finally {
        await dev.close();
      }
    });
  });
});
