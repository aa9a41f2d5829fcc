import { generateKeyPairSync } from 'node:crypto';
import { createTestAppWithUser, TEST_JWT_SECRET, type TestApp } from '../support/app.js';
import { accessClaims, b64url, bearer, handmade, loginJson, sign } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';
import { withinBound } from '../support/eventually.js';

const ME = '/api/v1/users/me';
const INVALID_CREDENTIALS = { detail: 'Could not validate credentials' };

/**
 * Every token attack is answered 401 "Could not validate credentials" with
 * `WWW-Authenticate: Bearer`. The first test proves the forging helpers make tokens the service
 * accepts, so each rejection below is caused by the one thing the attack changes.
 */
describe('Auth: token attacks', () => {
  let t: TestApp;
  let user: CreatedUser;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  beforeAll(async () => ({ t, user } = await createTestAppWithUser()));
  afterAll(() => t.close());

  const valid = (overrides: Record<string, unknown> = {}) => accessClaims(t, user.id, overrides);
  const withoutClaim = (name: string) => {
    const claims = valid();
    delete claims[name];
    return sign(claims);
  };

  it('accepts a token forged with the real secret and the full claim set (control)', async () => {
    await t
      .http()
      .get(ME)
      .set(bearer(sign(valid())))
      .expect(200);
    await t
      .http()
      .get(ME)
      .set(bearer(handmade({ alg: 'HS256', typ: 'JWT' }, valid(), TEST_JWT_SECRET)))
      .expect(200);
  });

  const attacks: [string, () => string | Promise<string>][] = [
    ['alg: none (no signature)', () => handmade({ alg: 'none', typ: 'JWT' }, valid(), null)],
    ['alg: none with an HS256 signature', () => handmade({ alg: 'none', typ: 'JWT' }, valid(), TEST_JWT_SECRET)],
    ['alg: NONE spelled otherwise', () => handmade({ alg: 'None' }, valid(), null)],
    ['HS384 with the real secret', () => sign(valid(), { algorithm: 'HS384' })],
    ['HS512 with the real secret', () => sign(valid(), { algorithm: 'HS512' })],
    [
      'RS256 signed with an attacker key',
      () => sign(valid(), { algorithm: 'RS256', secret: privateKey.export({ type: 'pkcs1', format: 'pem' }) }),
    ],
    [
      'RS256 header over an HMAC signature (algorithm confusion)',
      () => handmade({ alg: 'RS256', typ: 'JWT' }, valid(), TEST_JWT_SECRET),
    ],
    [
      'tampered signature',
      () => {
        const token = sign(valid());
        const [h, p, s] = token.split('.');
        const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
        return `${h}.${p}.${flipped}`;
      },
    ],
    [
      'tampered payload (sub swapped) with the original signature',
      async () => {
        const admin = await t.factories.admin();
        const [h, , s] = sign(valid()).split('.');
        return `${h}.${b64url(valid({ sub: String(admin.id) }))}.${s}`;
      },
    ],
    ['signed with another secret', () => sign(valid(), { secret: `${TEST_JWT_SECRET}-other` })],
    ['missing exp', () => withoutClaim('exp')],
    [
      'exp as a string',
      () =>
        handmade(
          { alg: 'HS256', typ: 'JWT' },
          valid({ exp: String(Math.floor(Date.now() / 1000) + 600) }),
          TEST_JWT_SECRET,
        ),
    ],
    [
      'expired',
      () => sign(valid({ iat: Math.floor(Date.now() / 1000) - 3600, exp: Math.floor(Date.now() / 1000) - 60 })),
    ],
    ['wrong iss', () => sign(valid({ iss: 'someone-else' }))],
    ['missing iss', () => withoutClaim('iss')],
    ['wrong aud', () => sign(valid({ aud: 'another-api' }))],
    ['missing aud', () => withoutClaim('aud')],
    ['missing jti', () => withoutClaim('jti')],
    ['jti that is not a UUID', () => sign(valid({ jti: '------------------------------------' }))],
    ['missing token_type', () => withoutClaim('token_type')],
    ['refresh token used as bearer', async () => (await loginJson(t, user.email, user.password)).refresh],
    ['refresh-typed token forged with the real secret', () => sign(valid({ token_type: 'refresh' }))],
    [
      'kid header pointing at /dev/null, signed with an empty key',
      () => handmade({ alg: 'HS256', typ: 'JWT', kid: '../../../../dev/null' }, valid(), ''),
    ],
    [
      'kid header with SQL injection, signed with the injected key',
      () => handmade({ alg: 'HS256', typ: 'JWT', kid: "x' UNION SELECT 'attacker-key' --" }, valid(), 'attacker-key'),
    ],
    [
      'jku/x5u header pointing at an attacker key set',
      () =>
        sign(valid(), {
          secret: 'attacker-key',
          header: { jku: 'https://attacker.example/jwks.json', x5u: 'https://attacker.example/cert.pem' },
        }),
    ],
    ['unknown sub', () => sign(valid({ sub: '2147483000' }))],
    ['sub beyond the id range', () => sign(valid({ sub: '9999999999' }))],
    ['non-numeric sub', () => sign(valid({ sub: 'admin' }))],
    ['numeric (not string) sub', () => sign(valid({ sub: user.id }))],
    ['not a JWT at all', () => 'definitely-not-a-token'],
    ['header that is not JSON', () => `${Buffer.from('{{{').toString('base64url')}.${b64url(valid())}.AAAA`],
  ];

  it.each(attacks)('rejects %s with 401', async (_name, build) => {
    const token = await build();
    const res = await t.http().get(ME).set(bearer(token)).expect(401);
    expect(res.body).toEqual(INVALID_CREDENTIALS);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('rejects an access token sent to /auth/refresh and to /auth/refresh-cookie', async () => {
    const { access } = await loginJson(t, user.email, user.password);
    const body = await t.http().post('/api/v1/auth/refresh').send({ refresh_token: access }).expect(401);
    expect(body.body).toEqual({ detail: 'Invalid refresh token' });
    const cookie = await t
      .http()
      .get('/api/v1/auth/refresh-cookie')
      .set('Cookie', `refresh_token=${access}`)
      .expect(401);
    expect(cookie.body).toEqual({ detail: 'Invalid refresh token' });
  });

  it('rejects forged refresh tokens at /auth/refresh (none, HS512, wrong aud, missing exp)', async () => {
    const refresh = (o: Record<string, unknown> = {}) => valid({ token_type: 'refresh', ...o });
    const forged = [
      handmade({ alg: 'none' }, refresh(), null),
      sign(refresh(), { algorithm: 'HS512' }),
      sign(refresh({ aud: 'another-api' })),
      (() => {
        const claims = refresh();
        delete claims.exp;
        return sign(claims);
      })(),
    ];
    for (const token of forged) {
      const res = await t.http().post('/api/v1/auth/refresh').send({ refresh_token: token }).expect(401);
      expect(res.body).toEqual({ detail: 'Invalid refresh token' });
    }
    // Control: the same claims, properly signed, are accepted.
    await t
      .http()
      .post('/api/v1/auth/refresh')
      .send({ refresh_token: sign(refresh()) })
      .expect(200);
  });

  it('rejects a revoked access token after logout', async () => {
    const { access } = await loginJson(t, user.email, user.password);
    await t.http().get(ME).set(bearer(access)).expect(200);
    await t.http().post('/api/v1/auth/logout').set(bearer(access)).expect(200);
    const res = await t.http().get(ME).set(bearer(access)).expect(401);
    expect(res.body).toEqual(INVALID_CREDENTIALS);
  });

  it('rejects a reused (rotated) refresh token', async () => {
    const { refresh } = await loginJson(t, user.email, user.password);
    await t.http().post('/api/v1/auth/refresh').send({ refresh_token: refresh }).expect(200);
    const res = await t.http().post('/api/v1/auth/refresh').send({ refresh_token: refresh }).expect(401);
    expect(res.body).toEqual({ detail: 'Invalid refresh token' });
  });

  it('rejects the token of a user deactivated or deleted after it was issued', async () => {
    const victim = await t.factories.user();
    await t.http().get(ME).set(victim.auth).expect(200);
    // Written behind the service's back (SQL): the user-row trigger tells every instance, which may
    // serve its in-process copy until then — at most 1 s, as for a change made on another instance.
    const answerWithin1s = (status: number) =>
      withinBound(
        () => t.http().get(ME).set(victim.auth),
        (res) => res.status === status,
      );
    await t.db.query('UPDATE users SET is_active = false WHERE id = $1', [victim.id]);
    expect((await answerWithin1s(401)).body).toEqual(INVALID_CREDENTIALS);
    await t.db.query('UPDATE users SET is_active = true WHERE id = $1', [victim.id]);
    expect((await answerWithin1s(200)).status).toBe(200);
    await t.db.query('DELETE FROM users WHERE id = $1', [victim.id]);
    expect((await answerWithin1s(401)).body).toEqual(INVALID_CREDENTIALS);
  });

  it('answers a missing token with 401 "Not authenticated" and WWW-Authenticate: Bearer', async () => {
    for (const headers of [{}, { Authorization: 'Basic dXNlcjpwYXNz' }, { Authorization: 'Bearer' }]) {
      const res = await t.http().get(ME).set(headers).expect(401);
      expect(res.body).toEqual({ detail: 'Not authenticated' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });
});
