import {
  API_KEYS,
  bearerKey,
  createKey,
  INVALID_CREDENTIALS,
  NOT_ENOUGH_PERMISSIONS,
  xApiKey,
} from '../support/api-keys.js';
import { closeApps, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { sleep } from '../support/mail.js';
import { listening, openStream, within, type SseClient } from '../support/notifications.js';
import { createTwoInstances, postStatus, postTracker, type TrackerWorld } from '../support/trackers.js';

const N = '/api/v1/notifications';

/**
 * The live stream with an API key, on two instances sharing one database: a `read` key opens it
 * (either key header), a `write` key asks for a ticket; the stream carries the owner's notifications
 * (a narrowed key's clients only) and ends within 2 s of the key's revocation or expiry or the
 * owner's deactivation, whichever instance made the change.
 */
describe('notifications: streams on API keys', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;
  let baseB: string;
  const open: SseClient[] = [];

  beforeAll(async () => {
    ({ a, b, w } = await createTwoInstances());
    baseB = await listening(b);
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  afterAll(() => closeApps(b, a));

  const stream = async (options: Parameters<typeof openStream>[1]) => {
    const s = await openStream(baseB, options);
    open.push(s);
    return s;
  };
  /** A status change of a new tracker of `runId` made through instance A: one notification per recipient. */
  const change = async (runId = w.runA.id) => {
    const trk = await postTracker(a, w.admin.auth, runId);
    await postStatus(a, w, trk.id);
    return trk.id as number;
  };
  const userOfA = () => a.factories.user({ clients: [w.clientA.id] });
  const openedAndReceives = async (s: SseClient) => {
    expect([s.status, s.headers['content-type']]).toEqual([200, 'text/event-stream']);
    const trackerId = await change();
    const [event] = await s.waitFor(1, 2000);
    expect(event).toMatchObject({ event: 'notification', data: { event: { tracker_id: trackerId } } });
  };
  const endsWithin2s = async (s: SseClient, cause: () => Promise<unknown>) => {
    expect(await within(s.ended, 300)).toBe(false);
    await cause();
    expect(await within(s.ended, 2000)).toBe(true);
  };

  it('a read key opens the stream (X-API-Key) and receives its owner’s notification; revoking the key on another instance ends it within 2 s', async () => {
    const user = await userOfA();
    const key = await createKey(a, user.auth, { scopes: ['read'] });
    const s = await stream({ headers: xApiKey(key.key) });
    await openedAndReceives(s);
    await endsWithin2s(s, () => a.http().delete(`${API_KEYS}/${key.id}`).set(user.auth).expect(200));
    const again = await stream({ headers: xApiKey(key.key) });
    await again.ended;
    expect([again.status, JSON.parse(again.body())]).toEqual([401, INVALID_CREDENTIALS]);
  });

  it.each<[string, (user: CreatedUser, keyId: number) => Promise<unknown>]>([
    [
      'the key expires',
      (_user, keyId) =>
        a.db.query(`UPDATE api_keys SET expires_at = now() + interval '1 second' WHERE id = $1`, [keyId]),
    ],
    [
      'the owner is deactivated',
      (user) => a.http().patch(`/api/v1/users/${user.id}`).set(w.admin.auth).send({ is_active: false }).expect(200),
    ],
    [
      'the owner loses the role',
      (user) =>
        a
          .http()
          .patch(`/api/v1/users/${user.id}`)
          .set(w.admin.auth)
          .send({ roles: ['ingest'] })
          .expect(200),
    ],
  ])('a key stream (Authorization: Bearer tps_…) ends within 2 s when %s', async (_name, cause) => {
    const user = await userOfA();
    const key = await createKey(a, user.auth, { scopes: ['read'] });
    const s = await stream({ headers: bearerKey(key.key) });
    await openedAndReceives(s);
    await endsWithin2s(s, () => cause(user, key.id));
  });

  it('a write key gets a ticket; the ticket opens a stream on the key, which ends when the key is revoked', async () => {
    const user = await userOfA();
    const key = await createKey(a, user.auth, { scopes: ['read', 'write'] });
    const issued = await a.http().post(`${N}/stream-ticket`).set(xApiKey(key.key)).expect(201);
    expect(issued.body).toEqual({ ticket: expect.any(String), expires_in: 60 });
    const s = await stream({ query: `ticket=${encodeURIComponent(issued.body.ticket as string)}` });
    await openedAndReceives(s);
    await endsWithin2s(s, () => a.http().delete(`${API_KEYS}/${key.id}`).set(user.auth).expect(200));

    // A ticket asked for by a key revoked before it is used opens nothing.
    const other = await createKey(a, user.auth, { scopes: ['read', 'write'] });
    const late = (await a.http().post(`${N}/stream-ticket`).set(bearerKey(other.key)).expect(201)).body.ticket;
    await a.http().delete(`${API_KEYS}/${other.id}`).set(user.auth).expect(200);
    const refused = await stream({ query: `ticket=${encodeURIComponent(late as string)}` });
    await refused.ended;
    expect([refused.status, JSON.parse(refused.body())]).toEqual([401, INVALID_CREDENTIALS]);
  });

  it('a key narrowed to clients streams only their events, live and in the replay', async () => {
    const key = await createKey(a, w.admin.auth, { scopes: ['read'], client_ids: [w.clientA.id] });
    const s = await stream({ headers: xApiKey(key.key) });
    expect(s.status).toBe(200);
    const outside = await change(w.runB.id);
    const inside = await change(w.runA.id);
    const [event] = await s.waitFor(1, 2000);
    expect(event.data).toMatchObject({ event: { tracker_id: inside, client_id: w.clientA.id } });
    // The replay from the start: the admin's notifications of client A only, in id order.
    const all = (await a.http().get(`${N}?limit=1000`).set(w.admin.auth).expect(200)).body.items as {
      id: number;
      event: { client_id: number; tracker_id: number };
    }[];
    expect(all.some((n) => n.event.tracker_id === outside)).toBe(true);
    const expected = all.filter((n) => n.event.client_id === w.clientA.id).map((n) => String(n.id));
    const replay = await stream({ headers: xApiKey(key.key), query: 'last_event_id=0' });
    const replayed = await replay.waitFor(expected.length, 2000);
    expect(replayed.map((e) => e.id)).toEqual([...expected].reverse());
    await sleep(300);
    const trackersSeen = [...s.events, ...replay.events].map(
      (e) => (e.data as { event: { tracker_id: number } }).event,
    );
    expect(replay.events).toHaveLength(expected.length);
    expect(trackersSeen.map((e) => e.tracker_id)).not.toContain(outside);
  });

  it('refuses a key without the scope (403), a bad key (401) and an ingest owner’s key (403); nothing is streamed', async () => {
    const user = await userOfA();
    const writeOnly = await createKey(a, user.auth, { scopes: ['write'] });
    const readOnly = await createKey(a, user.auth, { scopes: ['read'] });
    const ingestOwned = await createKey(a, w.admin.auth, { user_id: w.ingest.id, scopes: ['read', 'write'] });
    const status = async (headers: Record<string, string>) => {
      const s = await stream({ headers });
      await s.ended;
      return [s.status, JSON.parse(s.body())];
    };
    expect(await status(xApiKey(writeOnly.key))).toEqual([403, NOT_ENOUGH_PERMISSIONS]);
    expect(await status(xApiKey(ingestOwned.key))).toEqual([403, NOT_ENOUGH_PERMISSIONS]);
    const wrong = `${readOnly.key.slice(0, -1)}${readOnly.key.endsWith('x') ? 'y' : 'x'}`;
    expect(await status(xApiKey(wrong))).toEqual([401, INVALID_CREDENTIALS]);
    // The ticket route is a write; the ticket opens a read, so a key needs both.
    for (const key of [readOnly, writeOnly, ingestOwned]) {
      const res = await a.http().post(`${N}/stream-ticket`).set(xApiKey(key.key));
      expect([key.scopes, res.status, res.body]).toEqual([key.scopes, 403, NOT_ENOUGH_PERMISSIONS]);
    }
  });
});
