import { createPeerApp, createTestAppWithUser, type TestApp } from '../support/app.js';
import { accessClaims, bearer, loginJson, sign } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';
import { withinBound } from '../support/eventually.js';

const ME = '/api/v1/users/me';
const USERS = '/api/v1/users';
const REFRESH = '/api/v1/auth/refresh';
const REFRESH_COOKIE = '/api/v1/auth/refresh-cookie';
const INVALID_CREDENTIALS = { detail: 'Could not validate credentials' };
const INVALID_REFRESH = { detail: 'Invalid refresh token' };

/** A password change or a deactivation revokes every token issued to the user before it. */
describe('Auth: the per-user token epoch', () => {
  let t: TestApp;
  let admin: CreatedUser;
  beforeAll(
    async () => ({ t, user: admin } = await createTestAppWithUser('admin', { env: { NODE_ENV: 'production' } })),
  );
  afterAll(() => t.close());

  /** Every way an old token could still be used: bearer, refresh body, refresh cookie. */
  async function expectDead(session: { access: string; refresh: string }, app: TestApp = t): Promise<void> {
    // Another instance hears of the change within 1 s (its in-process tier); the changing one at once.
    const me = await withinBound(
      () => app.http().get(ME).set(bearer(session.access)),
      (res) => res.status === 401,
      app === t ? 0 : 1000,
    );
    expect(me.body).toEqual(INVALID_CREDENTIALS);
    const body = await app.http().post(REFRESH).send({ refresh_token: session.refresh });
    expect([body.status, body.body]).toEqual([401, INVALID_REFRESH]);
    const cookie = await app.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${session.refresh}`);
    expect([cookie.status, cookie.body]).toEqual([401, INVALID_REFRESH]);
  }

  it('PATCH /users/me with a new password: every earlier token dies, the changing one included; a new login works at once', async () => {
    const me = await t.factories.user();
    const bystander = await t.factories.user();
    const other = await loginJson(t, bystander.email, bystander.password);
    const first = await loginJson(t, me.email, me.password);
    const second = await loginJson(t, me.email, me.password);

    await t
      .http()
      .patch(ME)
      .set(bearer(first.access))
      .send({ password: 'brand-new-pass', current_password: me.password })
      .expect(200);
    // Issued right after the change (usually within the same second): valid.
    const fresh = await loginJson(t, me.email, 'brand-new-pass');
    await t.http().get(ME).set(bearer(fresh.access)).expect(200);

    await expectDead(first);
    await expectDead(second);
    await expectDead({ access: me.token, refresh: second.refresh });
    await t.http().post(REFRESH).send({ refresh_token: fresh.refresh }).expect(200);
    // Another user's tokens are untouched.
    await t.http().get(ME).set(bearer(other.access)).expect(200);
    await t.http().post(REFRESH).send({ refresh_token: other.refresh }).expect(200);
  });

  it("an admin's PATCH /users/{id} with a password, and a deactivation, revoke the user's tokens", async () => {
    for (const change of [{ password: 'set-by-admin-1' }, { is_active: false }] as {
      password?: string;
      is_active?: boolean;
    }[]) {
      const target = await t.factories.user();
      const session = await loginJson(t, target.email, target.password);
      await t.http().patch(`${USERS}/${target.id}`).set(admin.auth).send(change).expect(200);
      await t.http().patch(`${USERS}/${target.id}`).set(admin.auth).send({ is_active: true }).expect(200);
      await expectDead(session);
      const again = await loginJson(t, target.email, change.password ?? target.password);
      await t.http().get(ME).set(bearer(again.access)).expect(200);
    }
    // Other changes (name, roles) leave tokens alone.
    const target = await t.factories.user();
    const session = await loginJson(t, target.email, target.password);
    await t
      .http()
      .patch(`${USERS}/${target.id}`)
      .set(admin.auth)
      .send({ name: 'Renamed', roles: ['user'] })
      .expect(200);
    await t.http().get(ME).set(bearer(session.access)).expect(200);
  });

  it('a token without the precise issue time is judged by iat: the epoch second itself counts as before', async () => {
    const target = await t.factories.user();
    await t.http().patch(`${USERS}/${target.id}`).set(admin.auth).send({ password: 'set-by-admin-2' }).expect(200);
    const [{ epoch }] = await t.db.query(
      `SELECT floor(extract(epoch FROM tokens_valid_after))::int AS epoch FROM users WHERE id = $1`,
      [target.id],
    );
    const legacy = (iat: number) => sign(accessClaims(t, target.id, { iat, exp: iat + 600 }));
    expect(
      (
        await t
          .http()
          .get(ME)
          .set(bearer(legacy(epoch)))
      ).body,
    ).toEqual(INVALID_CREDENTIALS);
    await t
      .http()
      .get(ME)
      .set(bearer(legacy(epoch + 1)))
      .expect(200);
    // A precise issue time one microsecond either side of the epoch.
    const [{ us }] = await t.db.query(
      `SELECT (extract(epoch FROM tokens_valid_after) * 1000000)::bigint AS us FROM users WHERE id = $1`,
      [target.id],
    );
    const precise = (iatUs: number) =>
      sign(accessClaims(t, target.id, { iat: Math.floor(iatUs / 1e6), iat_us: iatUs }));
    expect(
      (
        await t
          .http()
          .get(ME)
          .set(bearer(precise(Number(us))))
      ).body,
    ).toEqual(INVALID_CREDENTIALS);
    await t
      .http()
      .get(ME)
      .set(bearer(precise(Number(us) + 1)))
      .expect(200);
  });

  it('a second instance on the same database refuses the old tokens at once', async () => {
    const other = await createPeerApp(t, { env: { NODE_ENV: 'production' } });
    try {
      const me = await t.factories.user();
      const session = await loginJson(other, me.email, me.password);
      await other.http().get(ME).set(bearer(session.access)).expect(200);
      await t
        .http()
        .patch(ME)
        .set(bearer(session.access))
        .send({ password: 'changed-on-one', current_password: me.password })
        .expect(200);
      await expectDead(session, other);
      const fresh = await loginJson(t, me.email, 'changed-on-one');
      await other.http().get(ME).set(bearer(fresh.access)).expect(200);
    } finally {
      await other.close();
    }
  });
});
