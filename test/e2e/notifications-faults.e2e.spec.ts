import { createTestApp, redisAvailable, type TestApp } from '../support/app.js';
import { bearer } from '../support/auth.js';
import { databaseUrl } from '../support/database.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { listening, openStream, type SseClient } from '../support/notifications.js';
import { createTrackerWorld, postStatus, postTracker, type TrackerWorld } from '../support/trackers.js';

const N = '/api/v1/notifications';

/**
 * Streams through faults: an instance whose database goes away for a while delivers, once it is
 * back, everything committed meanwhile, in order, nothing skipped; with Redis down, tickets and
 * streams work (they depend on PostgreSQL only).
 */
describe('notifications: streams through database and Redis faults', () => {
  let direct: TestApp;
  let w: TrackerWorld;
  const streams: SseClient[] = [];

  beforeAll(
    async () => ({ t: direct, w } = await createTrackerWorld({ env: { NOTIFICATION_STREAM_KEEPALIVE_SECONDS: '1' } })),
  );
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  afterAll(() => direct.close());

  const newTracker = () => postTracker(direct, w.admin.auth, w.runA.id);
  const move = (trackerId: number, status: string) => postStatus(direct, w, trackerId, status);

  it('a database outage delays delivery on the cut-off instance; afterwards everything arrives in order', async () => {
    const proxy = await FaultProxy.forUrl(databaseUrl(direct.database));
    const cutOff = await createTestApp({
      database: direct.database,
      databaseUrlOverride: proxy.rewrite(databaseUrl(direct.database)),
    });
    try {
      const user = await direct.factories.user({ clients: [w.clientA.id] });
      const s = await openStream(await listening(cutOff), { headers: bearer(user.token) });
      streams.push(s);
      const trk = await newTracker();
      await move(trk.id, 'IN_TRANSIT');
      await s.waitFor(1);
      await proxy.cut();
      await move(trk.id, 'IN_STORAGE');
      await move(trk.id, 'IN_TRANSIT');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(s.events).toHaveLength(1);
      await proxy.pass();
      const events = await s.waitFor(3, 8000);
      expect(events.map((e) => (e.data as { event: { to_status: string } }).event.to_status)).toEqual([
        'IN_TRANSIT',
        'IN_STORAGE',
        'IN_TRANSIT',
      ]);
      const ids = events.map((e) => Number(e.id));
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    } finally {
      await proxy.pass();
      await cutOff.close();
      await proxy.close();
    }
  });

  (redisAvailable ? it : it.skip)(
    'with Redis down, a ticket is issued and redeemed once, and its stream delivers',
    async () => {
      const proxy = await FaultProxy.forUrl(process.env.REDIS_URL as string);
      const noRedis = await createTestApp({
        database: direct.database,
        redis: true,
        env: { REDIS_URL: proxy.rewrite(process.env.REDIS_URL as string) },
      });
      try {
        await proxy.cut();
        const user = await direct.factories.user({ clients: [w.clientA.id] });
        const ticket = (await noRedis.http().post(`${N}/stream-ticket`).set(user.auth).expect(201)).body
          .ticket as string;
        const s = await openStream(await listening(noRedis), { query: `ticket=${encodeURIComponent(ticket)}` });
        streams.push(s);
        expect(s.status).toBe(200);
        const again = await noRedis.http().get(`${N}/stream`).query({ ticket });
        expect([again.status, again.body]).toEqual([401, { detail: 'Could not validate credentials' }]);
        const trk = await newTracker();
        await move(trk.id, 'IN_TRANSIT');
        expect((await s.waitFor(1, 3000))[0].data).toMatchObject({ event: { tracker_id: trk.id } });
      } finally {
        await proxy.pass();
        await noRedis.close();
        await proxy.close();
      }
    },
  );
});
