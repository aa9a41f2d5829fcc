import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

const ME = '/api/v1/users/me';
const LOGOUT = '/api/v1/auth/logout';

/** The guard and logout read `Authorization` with one parser: what one accepts, the other revokes. */
describe('Auth: one reading of the Authorization header', () => {
  let t: TestApp;
  let user: CreatedUser;
  beforeAll(async () => ({ t, user } = await createTestAppWithUser()));
  afterAll(() => t?.close());

  const accepted: [string, (token: string) => string][] = [
    ['Bearer <jwt>', (token) => `Bearer ${token}`],
    ['bearer <jwt> (scheme in any case)', (token) => `bearer ${token}`],
    ['BEARER <jwt>', (token) => `BEARER ${token}`],
    ['Bearer  <jwt> (several spaces)', (token) => `Bearer  ${token}`],
  ];

  it.each(accepted)('%s: the guard accepts it and logout revokes the token', async (_name, header) => {
    const token = t.tokenFor(user.id);
    await t.http().get(ME).set('Authorization', header(token)).expect(200);
    await t.http().post(LOGOUT).set('Authorization', header(token)).expect(200);
    const after = await t.http().get(ME).set('Authorization', `Bearer ${token}`).expect(401);
    expect(after.body).toEqual({ detail: 'Could not validate credentials' });
  });

  const rejected: [string, (token: string) => string][] = [
    ['Bearer <jwt> junk', (token) => `Bearer ${token} junk`],
    ['Bearer <jwt> <jwt>', (token) => `Bearer ${token} ${token}`],
    ['Bearer<TAB><jwt>', (token) => `Bearer\t${token}`],
    ['Bearer <jwt><TAB>x', (token) => `Bearer ${token}\tx`],
    ['Bearer,<jwt>', (token) => `Bearer,${token}`],
  ];

  it.each(rejected)(
    '%s: the guard answers 401 Could not validate credentials and logout revokes nothing',
    async (_name, header) => {
      const token = t.tokenFor(user.id);
      const denied = await t.http().get(ME).set('Authorization', header(token)).expect(401);
      expect(denied.body).toEqual({
        detail: expect.stringMatching(/^(Could not validate credentials|Not authenticated)$/),
      });
      expect(denied.headers['www-authenticate']).toBe('Bearer');
      const out = await t.http().post(LOGOUT).set('Authorization', header(token)).expect(200);
      expect(out.body).toEqual({ detail: 'Successfully logged out' });
      await t.http().get(ME).set('Authorization', `Bearer ${token}`).expect(200);
    },
  );

  it('tells a malformed bearer header (Could not validate credentials) from none presented (Not authenticated)', async () => {
    const token = t.tokenFor(user.id);
    expect((await t.http().get(ME).set('Authorization', `Bearer ${token} junk`).expect(401)).body).toEqual({
      detail: 'Could not validate credentials',
    });
    expect((await t.http().get(ME).set('Authorization', `Bearer\t${token}`).expect(401)).body).toEqual({
      detail: 'Could not validate credentials',
    });
    for (const header of ['Bearer', `Basic ${token}`, `Token ${token}`, `Bearer,${token}`]) {
      const res = await t.http().get(ME).set('Authorization', header).expect(401);
      expect({ header, body: res.body }).toEqual({ header, body: { detail: 'Not authenticated' } });
    }
  });
});
