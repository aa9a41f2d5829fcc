import type { Response } from 'supertest';
import { CachedAnswers } from '../../src/infrastructure/cache/cached-answers.js';
import { createPeerApp, type TestApp } from '../support/app.js';
import { accessClaims, bearer, loginJson, sign } from '../support/auth.js';
import { withinBound } from '../support/eventually.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Answers served before routing: the same GET URL from the same caller, answered from the
 * in-process tier without Nest's router, guard and interceptors. They must be the routed answer to
 * the byte (status, body, headers), and never outlive anything that changes the caller or the data.
 */
const ME = '/api/v1/users/me';
/** Headers that differ between any two responses. */
const PER_RESPONSE = ['date', 'x-request-id'];

describe('Cached answers served before routing', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let answers: CachedAnswers;

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
    answers = t.app.get(CachedAnswers);
  });
  afterAll(() => t.close());

  /** The request, and how many answers were served before routing while it ran (0 or 1). */
  const get = async (
    url: string,
    auth: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<{ res: Response; served: number }> => {
    const before = answers.stats.served;
    const res = await t.http().get(url).set(auth).set(headers);
    return { res, served: answers.stats.served - before };
  };
  const headersOf = (res: Response) =>
    Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_RESPONSE.includes(name)));

  it('GET /users/me: the second request is served before routing, identical to the routed one', async () => {
    const user = await t.factories.user({ clients: [w.clientA.id] });
    const first = await get(ME, user.auth);
    expect(first).toMatchObject({ served: 0, res: { status: 200 } });
    const second = await get(ME, user.auth);
    expect(second.served).toBe(1);
    expect(second.res.status).toBe(200);
    expect(second.res.body).toEqual(first.res.body);
    expect(headersOf(second.res)).toEqual(headersOf(first.res));
    expect(second.res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.res.headers['x-cache']).toBeUndefined();
    // A conditional request gets its 304 from the shortcut as from the route.
    const conditional = await get(ME, user.auth, { 'If-None-Match': String(first.res.headers.etag) });
    expect(conditional).toMatchObject({ served: 1, res: { status: 304 } });
  });

  it('a cached tracker page: HIT before routing equals the routed HIT, per caller and URL', async () => {
    await t.factories.tracker({ runId: w.runA.id, name: 'answered-early' });
    const url = `${TRACKERS}?production_run_id=${w.runA.id}&sort_by=name`;
    const sameScope = await t.factories.user({ clients: [w.clientA.id] });
    expect((await get(url, w.userA.auth)).res.headers['x-cache']).toBe('MISS');
    // Another user of the same scope shares the cached page but not the memory of the answer.
    const routedHit = await get(url, sameScope.auth);
    expect(routedHit).toMatchObject({ served: 0, res: { status: 200, headers: { 'x-cache': 'HIT' } } });
    const early = await get(url, sameScope.auth);
    expect(early).toMatchObject({ served: 1, res: { status: 200, headers: { 'x-cache': 'HIT' } } });
    expect(early.res.text).toBe(routedHit.res.text);
    expect(headersOf(early.res)).toEqual(headersOf(routedHit.res));
    // The same page written differently is a different URL: routed (and answered from the cache).
    expect(await get(`${TRACKERS}?sort_by=name&production_run_id=${w.runA.id}`, sameScope.auth)).toMatchObject({
      served: 0,
      res: { headers: { 'x-cache': 'HIT' } },
    });
    // A request without a token, or with another one, goes to the guard.
    expect(await get(url, {})).toMatchObject({ served: 0, res: { status: 401 } });
  });

  it('a write that invalidates the list is seen at once', async () => {
    const url = `${TRACKERS}?production_run_id=${w.runA.id}&limit=100`;
    await get(url, w.admin.auth);
    const before = await get(url, w.admin.auth);
    expect(before.served).toBe(1);
    await t
      .http()
      .post(TRACKERS)
      .set(w.admin.auth)
      .send({ name: 'after-early', production_run_id: w.runA.id })
      .expect(201);
    const after = await get(url, w.admin.auth);
    expect(after).toMatchObject({ served: 0, res: { headers: { 'x-cache': 'MISS' } } });
    expect(after.res.body.total).toBe(before.res.body.total + 1);
  });

  it('a role change, a client change and a deactivation reach the route on the next request', async () => {
    const user = await t.factories.user({ clients: [w.clientA.id] });
    const url = `${TRACKERS}?limit=5`;
    await get(url, user.auth);
    expect((await get(url, user.auth)).served).toBe(1);
    await t
      .http()
      .patch(`/api/v1/users/${user.id}`)
      .set(w.admin.auth)
      .send({ client_list: [w.clientB.id] })
      .expect(200);
    const moved = await get(url, user.auth);
    expect(moved.served).toBe(0);
    expect(
      moved.res.body.items.every((item: { production_run_id: number }) => item.production_run_id !== w.runA.id),
    ).toBe(true);
    await t
      .http()
      .patch(`/api/v1/users/${user.id}`)
      .set(w.admin.auth)
      .send({ roles: ['ingest'] })
      .expect(200);
    expect(await get(url, user.auth)).toMatchObject({ served: 0, res: { status: 403 } });
    await get(ME, user.auth);
    expect((await get(ME, user.auth)).served).toBe(1);
    await t.http().patch(`/api/v1/users/${user.id}`).set(w.admin.auth).send({ is_active: false }).expect(200);
    expect(await get(ME, user.auth)).toMatchObject({ served: 0, res: { status: 401 } });
  });

  it('a logged-out token, a token from before a password change and an expired token are refused by the guard', async () => {
    const user = await t.factories.user({ clients: [w.clientA.id] });
    const { access } = await loginJson(t, user.email, user.password);
    await get(ME, bearer(access));
    expect((await get(ME, bearer(access))).served).toBe(1);
    await t.http().post('/api/v1/auth/logout').set(bearer(access)).expect(200);
    expect(await get(ME, bearer(access))).toMatchObject({ served: 0, res: { status: 401 } });

    const shortLived = sign(accessClaims(t, user.id, { exp: Math.floor(Date.now() / 1000) + 2 }));
    await get(ME, bearer(shortLived));
    expect((await get(ME, bearer(shortLived))).served).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(await get(ME, bearer(shortLived))).toMatchObject({ served: 0, res: { status: 401 } });

    // A password change ends the tokens issued before it, even the one it was made with — also for
    // a list page, whose cached answer does not depend on the user row.
    const other = await loginJson(t, user.email, user.password);
    const page = `${TRACKERS}?limit=3`;
    await get(page, bearer(other.access));
    expect((await get(page, bearer(other.access))).served).toBe(1);
    await t
      .http()
      .patch(ME)
      .set(bearer(other.access))
      .send({ password: 'a-new-password-1', current_password: user.password })
      .expect(200);
    // Twice: the first request after the change finds the user row re-read; the second finds it known.
    for (let i = 0; i < 2; i++)
      expect(await get(page, bearer(other.access))).toMatchObject({ served: 0, res: { status: 401 } });
  });

  it('answers served early are counted and timed under their route', async () => {
    const user = await t.factories.user();
    await get(ME, user.auth);
    await get(ME, user.auth);
    const text = (await t.http().get('/metrics').expect(200)).text;
    expect(text).toMatch(new RegExp(`^http_answers_before_routing_total ${answers.stats.served}$`, 'm'));
    expect(text).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/users\/me",status="200"\} \d+$/m,
    );
    expect(text).not.toMatch(/route="unmatched",status="200"/);
  });

  describe('with a second instance', () => {
    let b: TestApp;
    beforeAll(async () => {
      b = await createPeerApp(t);
    });
    afterAll(() => b?.close());

    /** B's answer, and whether B served it before routing. */
    const onB = async (url: string, auth: Record<string, string>) => {
      const counter = b.app.get(CachedAnswers).stats;
      const before = counter.served;
      const res = await b.http().get(url).set(auth);
      return { res, served: counter.served - before };
    };

    it('a role change, a logout and a list write made on A reach the answers B serves early within 1 s', async () => {
      const user = await t.factories.user({ clients: [w.clientA.id] });
      const { access } = await loginJson(t, user.email, user.password);
      const url = `${TRACKERS}?production_run_id=${w.runA.id}&limit=100`;
      await onB(url, bearer(access));
      const early = await onB(url, bearer(access));
      expect(early.served).toBe(1);

      await t
        .http()
        .post(TRACKERS)
        .set(w.admin.auth)
        .send({ name: 'seen-on-b', production_run_id: w.runA.id })
        .expect(201);
      const written = await withinBound(
        () => onB(url, bearer(access)),
        (r) => r.res.body.total === early.res.body.total + 1,
      );
      expect(written.res.body.total).toBe(early.res.body.total + 1);

      await onB(url, bearer(access));
      expect((await onB(url, bearer(access))).served).toBe(1);
      await t
        .http()
        .patch(`/api/v1/users/${user.id}`)
        .set(w.admin.auth)
        .send({ roles: ['ingest'] })
        .expect(200);
      expect(
        (
          await withinBound(
            () => onB(url, bearer(access)),
            (r) => r.res.status === 403,
          )
        ).res.status,
      ).toBe(403);

      await onB(ME, bearer(access));
      expect((await onB(ME, bearer(access))).served).toBe(1);
      await t.http().post('/api/v1/auth/logout').set(bearer(access)).expect(200);
      expect(
        (
          await withinBound(
            () => onB(ME, bearer(access)),
            (r) => r.res.status === 401,
          )
        ).res.status,
      ).toBe(401);
    });
  });
});
