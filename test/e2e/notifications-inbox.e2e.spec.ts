import { MaintenanceService } from '../../src/maintenance/maintenance.service.js';
import type { TestApp } from '../support/app.js';
import { createTrackerWorld, postStatus, postTracker, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const N = '/api/v1/notifications';

/** Who receives an event, and the in-app inbox: pages, filter, counts, marking read, access. */
describe('notifications: recipients and inbox', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  const create = (runId: number) => postTracker(t, w.admin.auth, runId);
  const move = (trackerId: number) => postStatus(t, w, trackerId);
  const inbox = async (auth: { Authorization: string }, query = '') =>
    (await t.http().get(`${N}${query}`).set(auth).expect(200)).body;
  const trackersIn = async (auth: { Authorization: string }) =>
    (await inbox(auth, '?limit=1000')).items.map((n: { event: { tracker_id: number } }) => n.event.tracker_id);

  it('recipients: admins all, users by client_list, active ones with the in-app preference on — as they are at the time of the event', async () => {
    const f = t.factories;
    const userB = await f.user({ clients: [w.clientB.id] });
    const both = await f.user({ clients: [w.clientA.id, w.clientB.id] });
    const inactive = await f.user({ clients: [w.clientA.id], isActive: false });
    const quiet = await f.user({ clients: [w.clientA.id] });
    const ingestWithClients = await f.user({ roles: ['ingest'], clients: [w.clientA.id] });
    await t
      .http()
      .patch('/api/v1/users/me')
      .set(quiet.auth)
      .send({ notification_preferences: { email: true, ui: false } })
      .expect(200);

    const a = await create(w.runA.id);
    const b = await create(w.runB.id);
    await move(a.id);
    await move(b.id);

    expect(await trackersIn(w.admin.auth)).toEqual([b.id, a.id]);
    expect(await trackersIn(w.userA.auth)).toEqual([a.id]);
    expect(await trackersIn(userB.auth)).toEqual([b.id]);
    expect(await trackersIn(both.auth)).toEqual([b.id, a.id]);
    expect(await trackersIn(quiet.auth)).toEqual([]);
    const [{ n }] = await t.db.query('SELECT count(*)::int AS n FROM notifications WHERE user_id = ANY($1)', [
      [inactive.id, ingestWithClients.id, quiet.id],
    ]);
    expect(n).toBe(0);

    // Turning the preference on later does not deliver earlier events; a later one arrives.
    await t
      .http()
      .patch('/api/v1/users/me')
      .set(quiet.auth)
      .send({ notification_preferences: { email: true, ui: true } })
      .expect(200);
    expect(await trackersIn(quiet.auth)).toEqual([]);
    await t
      .http()
      .post(`${TRACKERS}/${a.id}/status`)
      .set(w.admin.auth)
      .send({ status: 'DELIVERED', delivery_location_id: w.delivery.id })
      .expect(201);
    expect(await trackersIn(quiet.auth)).toEqual([a.id]);

    // Removed from client A: that client's later events no longer reach the user; earlier ones stay.
    await t
      .http()
      .patch(`/api/v1/users/${both.id}`)
      .set(w.admin.auth)
      .send({ client_list: [w.clientB.id] })
      .expect(200);
    await move(a.id);
    await t
      .http()
      .post(`${TRACKERS}/${b.id}/status`)
      .set(w.admin.auth)
      .send({ status: 'IN_STORAGE', storage_location_id: w.storage.id })
      .expect(201);
    expect(await trackersIn(both.auth)).toEqual([b.id, a.id, b.id, a.id]);
    expect(await trackersIn(w.admin.auth)).toEqual([b.id, a.id, a.id, b.id, a.id]);
  });

  it('a new user is notified in-app by default', async () => {
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(w.admin.auth)
      .send({
        name: 'New',
        email: `new-${Date.now()}@example.com`,
        password: 'password123',
        roles: ['user'],
        client_list: [w.clientA.id],
      })
      .expect(201);
    expect(res.body.notification_preferences).toEqual({ email: true, ui: true });
    const [{ notify_ui }] = await t.db.query('SELECT notify_ui FROM users WHERE id = $1', [res.body.id]);
    expect(notify_ui).toBe(true);
  });

  it('pages newest first, filters by unread, counts, marks read (idempotent) and all read', async () => {
    const user = await t.factories.user({ clients: [w.clientA.id] });
    const trackers = [await create(w.runA.id), await create(w.runA.id), await create(w.runA.id)];
    for (const trk of trackers) await move(trk.id);

    const all = await inbox(user.auth);
    expect(all).toMatchObject({ total: 3, page: 1, size: 50, pages: 1 });
    expect(all.items.map((n: { event: { tracker_id: number } }) => n.event.tracker_id)).toEqual(
      trackers.map((trk) => trk.id).reverse(),
    );
    const [newest, middle, oldest] = all.items;
    expect(newest).toEqual({
      id: expect.any(Number),
      read: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      event: expect.objectContaining({
        type: 'tracker.status_changed',
        tracker_id: trackers[2].id,
        tracker_name: trackers[2].name,
        from_status: 'CREATED',
        to_status: 'IN_TRANSIT',
        source: 'manual',
        client_id: w.clientA.id,
      }),
    });
    expect(newest.id).toBeGreaterThan(middle.id);
    expect(await inbox(user.auth, '?skip=1&limit=1')).toMatchObject({
      total: 3,
      page: 2,
      size: 1,
      pages: 3,
      items: [{ id: middle.id }],
    });
    expect((await t.http().get(`${N}/unread-count`).set(user.auth).expect(200)).body).toEqual({ unread: 3 });

    const read = await t.http().post(`${N}/${middle.id}/read`).set(user.auth).expect(200);
    expect(read.body).toEqual({ ...middle, read: true });
    expect((await t.http().post(`${N}/${middle.id}/read`).set(user.auth).expect(200)).body).toEqual(read.body);
    expect((await t.http().get(`${N}/unread-count`).set(user.auth).expect(200)).body).toEqual({ unread: 2 });
    expect((await inbox(user.auth, '?unread=true')).items.map((n: { id: number }) => n.id)).toEqual([
      newest.id,
      oldest.id,
    ]);
    expect((await inbox(user.auth, '?unread=0')).items.map((n: { id: number }) => n.id)).toEqual([middle.id]);
    expect((await inbox(user.auth, '?unread=FALSE')).total).toBe(1);

    expect((await t.http().post(`${N}/read-all`).set(user.auth).expect(200)).body).toEqual({ updated: 2 });
    expect((await t.http().post(`${N}/read-all`).set(user.auth).expect(200)).body).toEqual({ updated: 0 });
    expect((await t.http().get(`${N}/unread-count`).set(user.auth).expect(200)).body).toEqual({ unread: 0 });
    // Another user's notifications are untouched.
    expect((await t.http().get(`${N}/unread-count`).set(w.userA.auth).expect(200)).body.unread).toBeGreaterThan(0);
  });

  it("another user's or a missing notification is 404; bad input 422; ingest 403; no token 401", async () => {
    const trk = await create(w.runA.id);
    await move(trk.id);
    const mine = (await inbox(w.userA.auth)).items[0];
    const other = await t.factories.user({ clients: [w.clientA.id] });
    for (const id of [mine.id, 2_000_000_000]) {
      const res = await t.http().post(`${N}/${id}/read`).set(other.auth).expect(404);
      expect(res.body).toEqual({ detail: 'Notification not found' });
    }
    expect((await inbox(w.userA.auth)).items[0].read).toBe(false);
    await t.http().post(`${N}/0/read`).set(w.userA.auth).expect(422);
    await t.http().post(`${N}/abc/read`).set(w.userA.auth).expect(422);
    await t.http().get(`${N}?unread=maybe`).set(w.userA.auth).expect(422);
    await t.http().get(`${N}?limit=1001`).set(w.userA.auth).expect(422);

    for (const [method, path] of [
      ['get', N],
      ['get', `${N}/unread-count`],
      ['post', `${N}/${mine.id}/read`],
      ['post', `${N}/read-all`],
      ['post', `${N}/stream-ticket`],
      ['get', `${N}/stream`],
    ] as const) {
      const denied = await t.http()[method](path).set(w.ingest.auth);
      expect([path, denied.status, denied.body]).toEqual([path, 403, { detail: 'Not enough permissions' }]);
      const anonymous = await t.http()[method](path);
      expect([path, anonymous.status, anonymous.body]).toEqual([path, 401, { detail: 'Not authenticated' }]);
    }
  });

  it('the periodic job deletes notifications and events older than NOTIFICATION_RETENTION_DAYS, and nothing newer', async () => {
    const old = await create(w.runA.id);
    const recent = await create(w.runA.id);
    await move(old.id);
    await move(recent.id);
    await t.db.query(
      `UPDATE notifications SET created_at = now() - interval '91 days' WHERE event_id IN (SELECT id FROM notification_events WHERE tracker_id = $1)`,
      [old.id],
    );
    await t.db.query(`UPDATE notification_events SET created_at = now() - interval '91 days' WHERE tracker_id = $1`, [
      old.id,
    ]);
    const before = await t.db.query(
      'SELECT count(*)::int AS n FROM notifications WHERE event_id IN (SELECT id FROM notification_events WHERE tracker_id = $1)',
      [recent.id],
    );
    const run = await t.app.get(MaintenanceService).runOnce();
    expect(run).toMatchObject({ ran: true, notificationsPurged: expect.any(Number) });
    const count = async (trackerId: number) =>
      (
        await t.db.query(
          'SELECT (SELECT count(*)::int FROM notification_events WHERE tracker_id = $1) AS events, (SELECT count(*)::int FROM notifications n JOIN notification_events e ON e.id = n.event_id WHERE e.tracker_id = $1) AS notifications',
          [trackerId],
        )
      )[0];
    expect(await count(old.id)).toEqual({ events: 0, notifications: 0 });
    expect(await count(recent.id)).toEqual({ events: 1, notifications: before[0].n });
    expect(before[0].n).toBeGreaterThan(0);
  });
});
