import { createTestApp, type TestApp } from '../support/app.js';
import { bearer, decode, loginJson } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';

const REFRESH = '/api/v1/auth/refresh';
const REFRESH_COOKIE = '/api/v1/auth/refresh-cookie';
const ME = '/api/v1/users/me';
const INVALID_REFRESH = { detail: 'Invalid refresh token' };
const INVALID_CREDENTIALS = { detail: 'Could not validate credentials' };

/**
 * Refresh-token rotation with reuse detection (OAuth 2.0 Security BCP): a refresh token presented
 * again after it was exchanged revokes its whole family — every access and refresh token
 * descended from the same login — on every instance, and the user must log in again. Two
 * instances share the database (and Redis when configured).
 */
describe('Auth: a reused refresh token revokes its family', () => {
  let a: TestApp;
  let b: TestApp;
  let user: CreatedUser;

  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ database: a.database });
    user = await a.factories.user();
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const exchange = async (app: TestApp, refresh: string) => {
    const res = await app.http().post(REFRESH).send({ refresh_token: refresh }).expect(200);
    return { access: res.body.access_token as string, refresh: res.body.refresh_token as string };
  };
  const refused = async (app: TestApp, refresh: string) => {
    const res = await app.http().post(REFRESH).send({ refresh_token: refresh }).expect(401);
    expect(res.body).toEqual(INVALID_REFRESH);
  };
  const denied = async (app: TestApp, access: string) => {
    const res = await app.http().get(ME).set(bearer(access)).expect(401);
    expect(res.body).toEqual(INVALID_CREDENTIALS);
  };

  it('a normal rotation chain keeps working, across instances; every token of it names the same family', async () => {
    const first = await loginJson(a, user.email, user.password);
    let current = { access: first.access, refresh: first.refresh };
    const families = new Set([decode(first.access).payload.fam, decode(first.refresh).payload.fam]);
    for (const app of [a, b, a, b]) {
      current = await exchange(app, current.refresh);
      families.add(decode(current.access).payload.fam);
      families.add(decode(current.refresh).payload.fam);
      await b.http().get(ME).set(bearer(current.access)).expect(200);
    }
    expect(families.size).toBe(1);
    expect([...families][0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('login → A→B → A again: 401, then B and everything descended from it: 401, on both instances', async () => {
    const login = await loginJson(a, user.email, user.password);
    const second = await exchange(a, login.refresh); // A → B
    const third = await exchange(b, second.refresh); // B → C
    // Another login of the same user is another family and stays valid.
    const other = await loginJson(a, user.email, user.password);

    await refused(b, login.refresh); // A presented again, on the other instance
    await refused(a, third.refresh); // C, descended from B
    await refused(b, second.refresh); // B itself (already used anyway)
    for (const app of [a, b]) {
      for (const access of [login.access, second.access, third.access]) await denied(app, access);
    }
    const cookie = await a.http().get(REFRESH_COOKIE).set('Cookie', `refresh_token=${third.refresh}`).expect(401);
    expect(cookie.body).toEqual(INVALID_REFRESH);

    await a.http().get(ME).set(bearer(other.access)).expect(200);
    await exchange(b, other.refresh);
    // Logging in again starts a new, valid family.
    const again = await loginJson(b, user.email, user.password);
    await exchange(a, again.refresh);
  });

  it('a reuse further down the chain (B again after B→C) revokes C and its access token too', async () => {
    const login = await loginJson(a, user.email, user.password);
    const second = await exchange(a, login.refresh);
    const third = await exchange(a, second.refresh);
    await refused(b, second.refresh);
    await refused(a, third.refresh);
    await denied(b, third.access);
  });

  it('two simultaneous refreshes of one token leave at most one valid descendant', async () => {
    for (let round = 0; round < 5; round++) {
      const login = await loginJson(a, user.email, user.password);
      const results = await Promise.all(
        [a, b, a, b].map((app) => app.http().post(REFRESH).send({ refresh_token: login.refresh })),
      );
      const winners = results.filter((r) => r.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      for (const r of results.filter((r) => r.status !== 200))
        expect([r.status, r.body]).toEqual([401, INVALID_REFRESH]);
      // The losers presented a used token: the family is revoked, so the winner's pair is refused as well.
      for (const winner of winners) {
        await refused(a, winner.body.refresh_token);
        await denied(b, winner.body.access_token);
      }
    }
  });
});
