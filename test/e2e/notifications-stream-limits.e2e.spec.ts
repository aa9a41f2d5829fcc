import { createTestApp, type TestApp } from '../support/app.js';
import { bearer } from '../support/auth.js';
import type { CreatedUser } from '../support/factories.js';
import { listening, openStream, within, type SseClient } from '../support/notifications.js';
import { withinBound } from '../support/eventually.js';
import { TRACKERS, trackerWorld, type TrackerWorld } from '../support/trackers.js';

const N = '/api/v1/notifications';
const CAP = 5; // NOTIFICATION_STREAMS_PER_USER's default
const REPLAY_MAX = 3;
const ENV = { NOTIFICATION_STREAM_REPLAY_MAX: String(REPLAY_MAX) };
const TOO_MANY = { detail: `Too many open notification streams: at most ${CAP} per user. Close one and try again.` };

/**
 * The stream's bounds, on two instances sharing one database: a user holds at most
 * NOTIFICATION_STREAMS_PER_USER concurrent streams counted across instances (one more: 429 with
 * a detail and Retry-After, nothing streamed), and a replay after Last-Event-ID sends at most
 * NOTIFICATION_STREAM_REPLAY_MAX notifications (the newest), announced by a `replay-truncated` event.
 */
describe('notifications: stream cap and replay bound', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;
  let bases: string[];
  const open: SseClient[] = [];

  beforeAll(async () => {
    a = await createTestApp({ env: ENV });
    b = await createTestApp({ env: ENV, database: a.database });
    w = await trackerWorld(a);
    bases = [await listening(a), await listening(b)];
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const slotsOf = async (userId: number) =>
    (await a.db.query('SELECT count(*)::int AS n FROM notification_stream_slots WHERE user_id = $1', [userId]))[0]
      .n as number;
  /** Opens `count` streams of the user at once, alternating between the instances. */
  const openAtOnce = async (user: CreatedUser, count: number) => {
    const streams = await Promise.all(
      Array.from({ length: count }, (_, i) => openStream(bases[i % 2], { headers: bearer(user.token) })),
    );
    open.push(...streams);
    return streams;
  };

  it(`${CAP + 1} concurrent opens across instances: exactly ${CAP} stream, the rest 429 with detail and Retry-After`, async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    for (const count of [CAP + 1, 2 * CAP + 2]) {
      const streams = await openAtOnce(user, count);
      const ok = streams.filter((s) => s.status === 200);
      const refused = streams.filter((s) => s.status !== 200);
      expect(ok).toHaveLength(CAP);
      for (const s of refused) {
        await s.ended;
        expect(s.status).toBe(429);
        expect(s.headers['retry-after']).toBe('30');
        expect(s.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(s.body())).toEqual(TOO_MANY);
        expect(s.body()).not.toMatch(/stream open|event:/);
      }
      expect(await slotsOf(user.id)).toBe(CAP);
      // Another user is not affected.
      const other = await a.factories.user({ clients: [w.clientA.id] });
      expect((await openAtOnce(other, 1))[0].status).toBe(200);
      // Closed streams give their slots back.
      for (const s of open.splice(0)) s.close();
      expect(
        await withinBound(
          () => slotsOf(user.id),
          (n) => n === 0,
          3000,
        ),
      ).toBe(0);
    }
    expect((await openAtOnce(user, 1))[0].status).toBe(200);
  });

  it('a slot not renewed for 30 s (its instance gone) no longer counts', async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    await a.db.query(
      `INSERT INTO notification_stream_slots (id, user_id, instance_id, renewed_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), now() - interval '31 seconds' FROM generate_series(1, $2)`,
      [user.id, CAP],
    );
    const [s] = await openAtOnce(user, 1);
    expect(s.status).toBe(200);
    expect(await slotsOf(user.id)).toBe(1);
  });

  it("an instance that shuts down gives back its streams' slots", async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    const c = await createTestApp({ env: ENV, database: a.database });
    const base = await listening(c);
    const streams = await Promise.all(
      Array.from({ length: CAP }, () => openStream(base, { headers: bearer(user.token) })),
    );
    expect(streams.map((s) => s.status)).toEqual(Array(CAP).fill(200));
    await c.close();
    expect(await within(Promise.all(streams.map((s) => s.ended)), 3000)).toBe(true);
    expect(await slotsOf(user.id)).toBe(0);
    expect((await openAtOnce(user, CAP)).map((s) => s.status)).toEqual(Array(CAP).fill(200));
  });

  it(`a replay sends at most the newest ${REPLAY_MAX}, announced by a replay-truncated event; within the bound, all`, async () => {
    const user = await a.factories.user({ clients: [w.clientA.id] });
    const trk = (
      await a
        .http()
        .post(TRACKERS)
        .set(w.admin.auth)
        .send({ name: `TRK-${Math.random().toString(36).slice(2, 8)}`, production_run_id: w.runA.id })
        .expect(201)
    ).body;
    for (const status of ['IN_TRANSIT', 'IN_STORAGE', 'IN_TRANSIT', 'IN_STORAGE', 'IN_TRANSIT']) {
      const extra = status === 'IN_STORAGE' ? { storage_location_id: w.storage.id } : {};
      await a
        .http()
        .post(`${TRACKERS}/${trk.id}/status`)
        .set(w.admin.auth)
        .send({ status, ...extra })
        .expect(201);
    }
    const ids = (await a.http().get(`${N}?limit=1000`).set(user.auth).expect(200)).body.items
      .map((n: { id: number }) => n.id)
      .reverse() as number[];
    expect(ids).toHaveLength(5);

    const fromZero = await openStream(bases[1], { headers: { ...bearer(user.token), 'Last-Event-ID': '0' } });
    open.push(fromZero);
    const events = await fromZero.waitFor(1 + REPLAY_MAX);
    expect(events[0]).toEqual({
      id: undefined,
      event: 'replay-truncated',
      data: { replay_limit: REPLAY_MAX, first_id: ids[2] },
    });
    expect(events.slice(1).map((e) => [e.event, e.id])).toEqual(ids.slice(2).map((id) => ['notification', String(id)]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fromZero.events).toHaveLength(1 + REPLAY_MAX);

    const withinBoundReplay = await openStream(bases[0], {
      headers: bearer(user.token),
      query: `last_event_id=${ids[1]}`,
    });
    open.push(withinBoundReplay);
    const replayed = await withinBoundReplay.waitFor(REPLAY_MAX);
    expect(replayed.map((e) => [e.event, e.id])).toEqual(ids.slice(2).map((id) => ['notification', String(id)]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(withinBoundReplay.events).toHaveLength(REPLAY_MAX);
  });
});
