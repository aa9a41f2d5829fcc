import { createTestApp, type TestApp } from '../support/app.js';
import { bearer, loginJson } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';
import { listening, openStream } from '../support/notifications.js';
import { TRACKERS, trackerWorld, type TrackerWorld } from '../support/trackers.js';

const N = '/api/v1/notifications';
const UNAUTHORIZED = { detail: 'Could not validate credentials' };

/**
 * A stream ticket lives on the credential that asked for it: once that credential is no longer
 * good — the token logged out, the user deactivated, the password changed, the role lost — the
 * ticket is refused at redemption on any instance (401 with the detail, not one byte of the event
 * stream, no replay of the inbox), not merely ended by the periodic check after it replayed.
 */
describe('notifications: stream tickets outlive nothing', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;
  let baseB: string;

  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ database: a.database });
    w = await trackerWorld(a);
    baseB = await listening(b);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  /** A user of client A with a notification in the inbox, so that a replay from 0 would send something. */
  const userWithInbox = async (): Promise<CreatedUser> => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    const trk = (
      await a
        .http()
        .post(TRACKERS)
        .set(w.admin.auth)
        .send({ name: `TRK-${Math.random().toString(36).slice(2, 8)}`, production_run_id: w.runA.id })
        .expect(201)
    ).body;
    await a.http().post(`${TRACKERS}/${trk.id}/status`).set(w.admin.auth).send({ status: 'IN_TRANSIT' }).expect(201);
    const inbox = await a.http().get(N).set(user.auth).expect(200);
    expect(inbox.body.total).toBe(1);
    return user;
  };

  /** Redeems the ticket on the other instance, asking for a replay from the start. */
  const redeem = async (ticket: string) => {
    const s = await openStream(baseB, { query: `ticket=${encodeURIComponent(ticket)}&last_event_id=0` });
    await s.ended;
    return { status: s.status, type: s.headers['content-type'], body: s.body(), events: s.events };
  };

  const refused = (result: Awaited<ReturnType<typeof redeem>>) => {
    expect(result.status).toBe(401);
    expect(result.type).toMatch(/^application\/json/);
    expect(JSON.parse(result.body)).toEqual(UNAUTHORIZED);
    expect(result.body).not.toMatch(/stream open|event:|keepalive/);
    expect(result.events).toEqual([]);
  };

  const changes: [string, (user: CreatedUser, token: string) => Promise<unknown>][] = [
    [
      'logout of the token that asked for it',
      (_user, token) => a.http().post('/api/v1/auth/logout').set(bearer(token)).expect(200),
    ],
    [
      'deactivation of the user',
      (user) => a.http().patch(`/api/v1/users/${user.id}`).set(w.admin.auth).send({ is_active: false }).expect(200),
    ],
    [
      'a password change',
      (user) =>
        a
          .http()
          .patch(`/api/v1/users/${user.id}`)
          .set(w.admin.auth)
          .send({ password: 'another-password-1' })
          .expect(200),
    ],
    [
      'the loss of the role',
      (user) =>
        a
          .http()
          .patch(`/api/v1/users/${user.id}`)
          .set(w.admin.auth)
          .send({ roles: ['ingest'] })
          .expect(200),
    ],
  ];

  it.each(changes)(
    'a ticket issued before %s is refused at redemption: 401, nothing streamed',
    async (_name, change) => {
      const user = await userWithInbox();
      const { access } = await loginJson(a, user.email, user.password);
      const ticket = (await a.http().post(`${N}/stream-ticket`).set(bearer(access)).expect(201)).body.ticket as string;
      await change(user, access);
      refused(await redeem(ticket));
    },
  );

  it('control: the same ticket without such a change opens the stream and replays the inbox', async () => {
    const user = await userWithInbox();
    const { access } = await loginJson(a, user.email, user.password);
    const ticket = (await a.http().post(`${N}/stream-ticket`).set(bearer(access)).expect(201)).body.ticket as string;
    const s = await openStream(baseB, { query: `ticket=${encodeURIComponent(ticket)}&last_event_id=0` });
    try {
      expect(s.status).toBe(200);
      expect(await s.waitFor(1)).toHaveLength(1);
    } finally {
      s.close();
    }
  });
});
