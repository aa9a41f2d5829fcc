import type { TestApp } from '../support/app.js';
import {
  countRows,
  createTrackerWorld,
  insertDailyPoint,
  insertHourlyPoint,
  TRACKERS,
  type TrackerWorld,
} from '../support/trackers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000).toISOString();

describe('Trackers API', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  const create = (body: Record<string, unknown>, auth = w.admin.auth) => t.http().post(TRACKERS).set(auth).send(body);
  const createOk = async (body: Record<string, unknown>, auth = w.admin.auth) => {
    const res = await create(body, auth);
    expect(res.status).toBe(201);
    return res.body;
  };

  describe('roles', () => {
    it('401 without a token, 403 for ingest on every route, 403 for a user deleting', async () => {
      const res = await t.http().get(TRACKERS);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Not authenticated' });
      const tracker = await t.factories.tracker({ runId: w.runA.id });
      const calls = [
        t.http().get(TRACKERS),
        t.http().get(`${TRACKERS}/status-counts`),
        t.http().post(TRACKERS).send({ name: 'x', production_run_id: w.runA.id }),
        t.http().get(`${TRACKERS}/${tracker.id}`),
        t.http().put(`${TRACKERS}/${tracker.id}`).send({ notes: 'x' }),
        t.http().delete(`${TRACKERS}/${tracker.id}`),
        t.http().get(`${TRACKERS}/${tracker.id}/status-history`),
        t.http().post(`${TRACKERS}/${tracker.id}/status`).send({ status: 'IN_TRANSIT' }),
        t.http().post(`${TRACKERS}/import-csv`).attach('file', Buffer.from('name\nx\n'), 'a.csv'),
        t.http().get(`/api/v1/storage-locations/${w.storage.id}/trackers`),
        t.http().get(`/api/v1/delivery-locations/${w.delivery.id}/trackers`),
      ];
      for (const call of calls) {
        const denied = await call.set(w.ingest.auth);
        expect(denied.status).toBe(403);
        expect(denied.body).toEqual({ detail: 'Not enough permissions' });
      }
      const userDelete = await t.http().delete(`${TRACKERS}/${tracker.id}`).set(w.userA.auth);
      expect(userDelete.status).toBe(403);
      expect(await countRows(t.db, 'trackers', 'id = $1', [tracker.id])).toBe(1);
    });
  });

  describe('POST /trackers', () => {
    it('creates a tracker (201, exact shape) with its first status entry', async () => {
      const res = await create(
        { name: '  Alpha-1  ', production_run_id: w.runA.id, delivery_location_id: w.delivery.id, notes: 'fragile' },
        w.userA.auth,
      );
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Alpha-1',
        production_run_id: w.runA.id,
        status: 'CREATED',
        storage_location_id: null,
        delivery_location_id: w.delivery.id,
        notes: 'fragile',
        device_id: null,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        latest_location: null,
      });
      const history = await t.db.query('SELECT status, created_by FROM tracker_status_history WHERE tracker_id = $1', [
        res.body.id,
      ]);
      expect(history).toEqual([{ status: 'CREATED', created_by: w.userA.id }]);
    });

    it('back-fills the first entry at status_timestamp (offset-less means UTC) and honours IN_STORAGE', async () => {
      const body = await createOk({
        name: 'Backfilled',
        production_run_id: w.runA.id,
        status: 'IN_STORAGE',
        storage_location_id: w.storage.id,
        status_timestamp: '2026-03-01T10:00:00',
      });
      expect(body).toMatchObject({ status: 'IN_STORAGE', storage_location_id: w.storage.id });
      const history = await t.http().get(`${TRACKERS}/${body.id}/status-history`).set(w.admin.auth).expect(200);
      expect(history.body).toEqual([
        expect.objectContaining({
          status: 'IN_STORAGE',
          timestamp: '2026-03-01T10:00:00.000Z',
          storage_location_id: w.storage.id,
        }),
      ]);
    });

    it('a DELIVERED tracker starts with an entry at its destination', async () => {
      const body = await createOk({
        name: 'Born delivered',
        production_run_id: w.runA.id,
        status: 'DELIVERED',
        delivery_location_id: w.delivery2.id,
      });
      const [entry] = await t.db.query(
        'SELECT delivery_location_id FROM tracker_status_history WHERE tracker_id = $1',
        [body.id],
      );
      expect(entry.delivery_location_id).toBe(w.delivery2.id);
    });

    it('409 for a name already used in the same run; the same name in another run is fine', async () => {
      await createOk({ name: 'Twin', production_run_id: w.runA.id });
      const dup = await create({ name: 'Twin', production_run_id: w.runA.id });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ detail: `Tracker 'Twin' already exists in production run ${w.runA.id}` });
      await createOk({ name: 'Twin', production_run_id: w.runA2.id });
      expect(await countRows(t.db, 'trackers', "name = 'Twin'")).toBe(2);
    });

    it('concurrent creates of one name: exactly one 201, the others 409 with the documented detail', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, () => create({ name: 'Racer', production_run_id: w.runA.id })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body).toEqual({ detail: `Tracker 'Racer' already exists in production run ${w.runA.id}` });
      }
      expect(
        await countRows(t.db, 'tracker_status_history', `tracker_id IN (SELECT id FROM trackers WHERE name = 'Racer')`),
      ).toBe(1);
    });

    it('404 Production run not found for a missing run and for a run the user cannot see', async () => {
      for (const [runId, auth] of [
        [999999, w.admin.auth],
        [w.runB.id, w.userA.auth],
      ] as const) {
        const res = await create({ name: 'Nowhere', production_run_id: runId }, auth);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: 'Production run not found' });
      }
      expect(await countRows(t.db, 'trackers', "name = 'Nowhere'")).toBe(0);
    });

    it('404 for unknown storage or delivery locations', async () => {
      const storage = await create({
        name: 'S?',
        production_run_id: w.runA.id,
        status: 'IN_STORAGE',
        storage_location_id: 999999,
      });
      expect(storage.status).toBe(404);
      expect(storage.body).toEqual({ detail: 'Storage location not found' });
      const delivery = await create({ name: 'D?', production_run_id: w.runA.id, delivery_location_id: 999999 });
      expect(delivery.status).toBe(404);
      expect(delivery.body).toEqual({ detail: 'Delivery location not found' });
    });

    it.each([
      [{ name: 'x', production_run_id: 0 }, 'production_run_id'],
      [{ name: '   ', production_run_id: 1 }, 'name'],
      [{ name: 'x'.repeat(256), production_run_id: 1 }, 'name'],
      [{ production_run_id: 1 }, 'name'],
      [{ name: 'x' }, 'production_run_id'],
      [{ name: 'x', production_run_id: '1' }, 'production_run_id'],
      [{ name: 'x', production_run_id: 1, status: 'LOST' }, 'status'],
      [{ name: 'x', production_run_id: 1, status_timestamp: 'yesterday' }, 'status_timestamp'],
      [{ name: 'x', production_run_id: 1, colour: 'red' }, 'colour'],
    ])('422 for an invalid body %j', async (body, field) => {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/^Validation failed: /);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('422 for the status/location rules and a status_timestamp more than 5 minutes ahead', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ status: 'IN_STORAGE' }, 'Validation failed: storage_location_id: is required when status is IN_STORAGE'],
        [
          { status: 'IN_TRANSIT', storage_location_id: w.storage.id },
          'Validation failed: storage_location_id: is only allowed when status is IN_STORAGE',
        ],
        [{ status: 'DELIVERED' }, 'Validation failed: delivery_location_id: is required when status is DELIVERED'],
        [
          { status_timestamp: new Date(Date.now() + 6 * 60_000).toISOString() },
          'Validation failed: status_timestamp: must not be more than 5 minutes in the future',
        ],
      ];
      for (const [extra, detail] of cases) {
        const res = await create({ name: 'Rule breaker', production_run_id: w.runA.id, ...extra });
        expect(res.status).toBe(422);
        expect(res.body.detail).toBe(detail);
      }
      expect(await countRows(t.db, 'trackers', "name = 'Rule breaker'")).toBe(0);
      await createOk({
        name: 'Slightly ahead',
        production_run_id: w.runA.id,
        status_timestamp: new Date(Date.now() + 4 * 60_000).toISOString(),
      });
    });
  });

  describe('GET /trackers', () => {
    let run: { id: number };
    let ids: number[];
    beforeAll(async () => {
      run = await t.factories.run({ clientId: w.clientA.id });
      ids = [];
      const specs = [
        ['delta', 'CREATED'],
        ['Bravo', 'IN_TRANSIT'],
        ['charlie', 'DELIVERED'],
        ['alpha', 'IN_TRANSIT'],
        ['echo-ALP', 'CREATED'],
      ];
      for (const [i, [name, status]] of specs.entries()) {
        const tracker = await t.factories.tracker({
          runId: run.id,
          name,
          createdAt: `2026-02-0${5 - i}T00:00:00.000Z`,
          history: [{ status, timestamp: '2026-02-10T00:00:00Z' }],
        });
        ids.push(tracker.id);
      }
      // updated_at in yet another order
      await t.db.query(
        `UPDATE trackers SET updated_at = '2026-03-01'::timestamptz + (id % 3) * interval '1 day' + id * interval '1 second' WHERE production_run_id = $1`,
        [run.id],
      );
    });
    const list = (query: string, auth = w.admin.auth) =>
      t.http().get(`${TRACKERS}?production_run_id=${run.id}&${query}`).set(auth);
    const names = (res: { body: { items: { name: string }[] } }) => res.body.items.map((i) => i.name);

    it('returns a Page, sorted by id ascending by default, latest_location null', async () => {
      const res = await list('');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 5, page: 1, size: 50, pages: 1 });
      expect(res.body.items.map((i: { id: number }) => i.id)).toEqual(ids);
      expect(res.body.items.every((i: { latest_location: unknown }) => i.latest_location === null)).toBe(true);
      expect(Object.keys(res.body.items[0]).sort()).toEqual([
        'created_at',
        'delivery_location_id',
        'device_id',
        'id',
        'latest_location',
        'name',
        'notes',
        'production_run_id',
        'status',
        'storage_location_id',
        'updated_at',
      ]);
    });

    it('filters by id (one or a comma list), status (one or a list, any case) and name substring (case-insensitive)', async () => {
      expect(names(await list(`id=${ids[1]}`))).toEqual(['Bravo']);
      expect(names(await list(`id=${ids[3]},${ids[0]}`))).toEqual(['delta', 'alpha']);
      expect(names(await list(`id=${ids[2]}&id=${ids[4]}`))).toEqual(['charlie', 'echo-ALP']);
      expect(names(await list('status=IN_TRANSIT'))).toEqual(['Bravo', 'alpha']);
      expect(names(await list('status=delivered,CREATED'))).toEqual(['delta', 'charlie', 'echo-ALP']);
      expect(names(await list('name=ALP'))).toEqual(['alpha', 'echo-ALP']);
      expect(names(await list('name=bravo&status=IN_TRANSIT'))).toEqual(['Bravo']);
      expect((await list('name=zzz')).body).toMatchObject({ items: [], total: 0, pages: 0 });
      const other = await t.http().get(`${TRACKERS}?production_run_id=${w.runB.id}&name=delta`).set(w.admin.auth);
      expect(other.body.total).toBe(0);
    });

    it('sorts by every whitelisted field in both orders, ties broken by id', async () => {
      const all = (await list('')).body.items as { id: number }[];
      for (const field of ['id', 'name', 'status', 'created_at', 'updated_at']) {
        const [ordered] = await t.db.query(
          `SELECT array_agg(id ORDER BY ${field} ASC, id ASC) AS asc_ids, array_agg(id ORDER BY ${field} DESC, id DESC) AS desc_ids
             FROM trackers WHERE production_run_id = $1`,
          [run.id],
        );
        const asc = await list(`sort_by=${field}`);
        expect(asc.body.items.map((i: { id: number }) => i.id)).toEqual(ordered.asc_ids);
        const desc = await list(`sort_by=${field}&sort_order=desc`);
        expect(desc.body.items.map((i: { id: number }) => i.id)).toEqual(ordered.desc_ids);
      }
      expect(all.map((i) => i.id).sort((a, b) => a - b)).toEqual(ids);
      // created_at runs opposite to id in this fixture, so the sort really is by the column
      expect((await list('sort_by=created_at')).body.items[0].id).toBe(ids[4]);
    });

    it('422 for a sort field or order outside the whitelist and for bad filters', async () => {
      for (const query of [
        'sort_by=notes',
        'sort_by=production_run_id;drop',
        'sort_order=up',
        'sort_order=ASCENDING',
        'id=abc',
        'id=1,-2',
        'id=0',
        'status=LOST',
        'status=CREATED,nope',
        'production_run_id=x',
        'include_latest_location=yes',
        'unknown=1',
      ]) {
        const res = await t.http().get(`${TRACKERS}?${query}`).set(w.admin.auth);
        expect([query, res.status]).toEqual([query, 422]);
        expect(res.body.detail).toMatch(/^Validation failed: /);
      }
    });

    it('paginates with skip/limit and validates their range', async () => {
      const p = await list('limit=2&skip=2');
      expect(p.body).toMatchObject({ total: 5, page: 2, size: 2, pages: 3 });
      expect(p.body.items.map((i: { id: number }) => i.id)).toEqual(ids.slice(2, 4));
      const last = await list('limit=2&skip=4');
      expect(last.body.items.map((i: { id: number }) => i.id)).toEqual([ids[4]]);
      const beyond = await list('limit=2&skip=10');
      expect(beyond.body).toMatchObject({ items: [], total: 5, page: 6, pages: 3 });
      for (const query of ['limit=0', 'limit=1001', 'skip=-1', 'limit=abc']) {
        expect((await list(query)).status).toBe(422);
      }
      expect((await list('limit=1000')).status).toBe(200);
    });

    it('include_latest_location=true attaches the latest eligible location (null when none)', async () => {
      await insertHourlyPoint(t.db, ids[0], {
        bucket: '2026-02-11T08:00:00Z',
        reportedAt: '2026-02-11T08:42:00Z',
        latitude: 50,
        longitude: 8,
        confidence: 4,
      });
      await insertHourlyPoint(t.db, ids[0], {
        bucket: '2026-02-11T09:00:00Z',
        reportedAt: '2026-02-11T09:15:30Z',
        latitude: 51.5,
        longitude: -0.1,
        confidence: 3,
      });
      for (const flag of ['true', 'TRUE', '1']) {
        const res = await list(`include_latest_location=${flag}`);
        expect(res.body.items[0].latest_location).toEqual({
          timestamp: '2026-02-11T09:00:00.000Z',
          latitude: 51.5,
          longitude: -0.1,
          confidence: 3,
          reported_at: '2026-02-11T09:15:30.000Z',
          granularity: 'hourly',
        });
        expect(res.body.items[1].latest_location).toBeNull();
      }
      for (const flag of ['false', '0']) {
        expect((await list(`include_latest_location=${flag}`)).body.items[0].latest_location).toBeNull();
      }
    });

    it('a user sees only trackers of their clients', async () => {
      const tb = await t.factories.tracker({ runId: w.runB.id, name: 'hidden-b' });
      const mine = await t.http().get(`${TRACKERS}?limit=1000`).set(w.userA.auth);
      expect(mine.status).toBe(200);
      const runIds = new Set(mine.body.items.map((i: { production_run_id: number }) => i.production_run_id));
      expect(runIds.has(w.runB.id)).toBe(false);
      expect(mine.body.items.map((i: { id: number }) => i.id)).not.toContain(tb.id);
      const [{ n }] = await t.db.query(
        'SELECT count(*)::int AS n FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id WHERE pr.client_id = $1',
        [w.clientA.id],
      );
      expect(mine.body.total).toBe(n);
      const byId = await t.http().get(`${TRACKERS}?id=${tb.id}`).set(w.userA.auth);
      expect(byId.body.total).toBe(0);
      const admin = await t.http().get(`${TRACKERS}?id=${tb.id}`).set(w.admin.auth);
      expect(admin.body.total).toBe(1);
    });
  });

  describe('GET /trackers/{id}', () => {
    it('returns TrackerDetail with run, locations, ascending status history, latest location and newest history points', async () => {
      const tracker = await t.factories.tracker({
        runId: w.runA.id,
        deliveryLocationId: w.delivery.id,
        history: [
          { status: 'IN_STORAGE', timestamp: hoursAgo(10), storageLocationId: w.storage.id },
          { status: 'CREATED', timestamp: hoursAgo(50) },
          { status: 'IN_TRANSIT', timestamp: hoursAgo(30) },
        ],
      });
      await insertHourlyPoint(t.db, tracker.id, { bucket: '2026-01-01T05:00:00Z', latitude: 1, longitude: 1 }); // older than the cutoff: not in the view
      await insertDailyPoint(t.db, tracker.id, { bucket: '2026-01-01T00:00:00Z', latitude: 2, longitude: 2 });
      const recent = new Date(Date.now() - 3 * 3600_000);
      recent.setUTCMinutes(0, 0, 0);
      await insertHourlyPoint(t.db, tracker.id, {
        bucket: recent.toISOString(),
        latitude: 48.1,
        longitude: 11.5,
        confidence: 5,
      });

      const res = await t.http().get(`${TRACKERS}/${tracker.id}`).set(w.userA.auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: tracker.id,
        status: 'IN_STORAGE',
        storage_location_id: w.storage.id,
        delivery_location_id: w.delivery.id,
        production_run: {
          id: w.runA.id,
          description: w.runA.description,
          brand_id: w.runA.brand_id,
          client_id: w.clientA.id,
        },
        storage_location: { id: w.storage.id, name: w.storage.name },
        delivery_location: { id: w.delivery.id, name: w.delivery.name },
      });
      expect(res.body.status_history.map((e: { status: string }) => e.status)).toEqual([
        'CREATED',
        'IN_TRANSIT',
        'IN_STORAGE',
      ]);
      expect(res.body.status_history[0]).toEqual({
        id: expect.any(Number),
        tracker_id: tracker.id,
        status: 'CREATED',
        timestamp: expect.stringMatching(ISO),
        storage_location_id: null,
        delivery_location_id: null,
        notes: null,
        created_by: null,
        source: 'manual',
        created_at: expect.stringMatching(ISO),
      });
      const latest = {
        timestamp: recent.toISOString(),
        latitude: 48.1,
        longitude: 11.5,
        confidence: 5,
        reported_at: recent.toISOString(),
        granularity: 'hourly',
      };
      expect(res.body.latest_location).toEqual(latest);
      expect(res.body.location_history).toEqual([
        latest,
        {
          timestamp: '2026-01-01T00:00:00.000Z',
          latitude: 2,
          longitude: 2,
          confidence: 3,
          reported_at: '2026-01-01T00:00:00.000Z',
          granularity: 'daily',
        },
      ]);
    });

    it('carries only the newest 100 points of the combined history', async () => {
      const tracker = await t.factories.tracker({ runId: w.runA.id });
      await t.db.query(
        `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
         SELECT $1, date_trunc('hour', now()) - n * interval '1 hour', n, date_trunc('hour', now()) - n * interval '1 hour', 10, 10, 2
         FROM generate_series(0, 119) n`,
        [tracker.id],
      );
      const res = await t.http().get(`${TRACKERS}/${tracker.id}`).set(w.admin.auth);
      expect(res.body.location_history).toHaveLength(100);
      const [{ newest }] = await t.db.query(`SELECT date_trunc('hour', now()) AS newest`);
      expect(res.body.location_history[0].timestamp).toBe(new Date(newest).toISOString());
      expect(res.body.location_history[99].timestamp).toBe(
        new Date(new Date(newest).getTime() - 99 * 3600_000).toISOString(),
      );
      expect(res.body.storage_location).toBeNull();
      expect(res.body.delivery_location).toBeNull();
    });

    it('404 Tracker not found for missing and invisible trackers; 422 for a non-integer id', async () => {
      const hidden = await t.factories.tracker({ runId: w.runB.id });
      for (const [id, auth] of [
        [999999, w.admin.auth],
        [hidden.id, w.userA.auth],
      ] as const) {
        for (const path of ['', '/status-history']) {
          const res = await t.http().get(`${TRACKERS}/${id}${path}`).set(auth);
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ detail: 'Tracker not found' });
        }
      }
      for (const id of ['abc', '1.5', '0', '-3', '99999999999']) {
        const res = await t.http().get(`${TRACKERS}/${id}`).set(w.admin.auth);
        expect(res.status).toBe(422);
        expect(res.body.detail).toBe('Validation failed: id: must be a positive integer');
      }
    });
  });

  describe('PUT /trackers/{id}', () => {
    it('updates fields without touching the status history', async () => {
      const tracker = await t.factories.tracker({ runId: w.runA.id, name: 'Editable' });
      const res = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ name: ' Edited ', notes: 'n', delivery_location_id: w.delivery.id });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: tracker.id,
        name: 'Edited',
        notes: 'n',
        delivery_location_id: w.delivery.id,
        status: 'CREATED',
        latest_location: null,
      });
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(1);
      const unknown = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ delivery_location_id: 999999 });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ detail: 'Delivery location not found' });
      const cleared = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ notes: null, delivery_location_id: null });
      expect(cleared.body).toMatchObject({ notes: null, delivery_location_id: null, name: 'Edited' });
    });

    it('a changed status appends an entry at the current time; an unchanged one does not', async () => {
      const tracker = await t.factories.tracker({
        runId: w.runA.id,
        history: [{ status: 'CREATED', timestamp: hoursAgo(5) }],
      });
      const before = Date.now();
      const moved = await t.http().put(`${TRACKERS}/${tracker.id}`).set(w.userA.auth).send({ status: 'IN_TRANSIT' });
      expect(moved.status).toBe(200);
      expect(moved.body.status).toBe('IN_TRANSIT');
      const history = await t.http().get(`${TRACKERS}/${tracker.id}/status-history`).set(w.userA.auth);
      expect(history.body.map((e: { status: string }) => e.status)).toEqual(['CREATED', 'IN_TRANSIT']);
      expect(new Date(history.body[1].timestamp).getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(history.body[1].created_by).toBe(w.userA.id);
      await t.http().put(`${TRACKERS}/${tracker.id}`).set(w.userA.auth).send({ status: 'IN_TRANSIT' }).expect(200);
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(2);
      const stored = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ status: 'IN_STORAGE', storage_location_id: w.storage.id });
      expect(stored.body).toMatchObject({ status: 'IN_STORAGE', storage_location_id: w.storage.id });
      const noStorage = await t.http().put(`${TRACKERS}/${tracker.id}`).set(w.userA.auth).send({ status: 'DELIVERED' });
      expect(noStorage.status).toBe(422);
      expect(noStorage.body.detail).toBe(
        'Validation failed: delivery_location_id: is required when status is DELIVERED',
      );
      const delivered = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ status: 'DELIVERED', delivery_location_id: w.delivery.id });
      expect(delivered.body).toMatchObject({
        status: 'DELIVERED',
        storage_location_id: null,
        delivery_location_id: w.delivery.id,
      });
    });

    it('422 for IN_STORAGE without a storage location and for nulls where a value is required', async () => {
      const tracker = await t.factories.tracker({ runId: w.runA.id });
      const res = await t.http().put(`${TRACKERS}/${tracker.id}`).set(w.admin.auth).send({ status: 'IN_STORAGE' });
      expect(res.status).toBe(422);
      expect(res.body.detail).toBe('Validation failed: storage_location_id: is required when status is IN_STORAGE');
      for (const body of [
        { name: null },
        { production_run_id: null },
        { status: null },
        { name: '' },
        { status: 'LOST' },
        { storage_location_id: w.storage.id },
      ]) {
        expect((await t.http().put(`${TRACKERS}/${tracker.id}`).set(w.admin.auth).send(body)).status).toBe(422);
      }
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(1);
    });

    it('moves a tracker to another visible run; 404 for an invisible target run, 409 for a taken name', async () => {
      const tracker = await t.factories.tracker({ runId: w.runA.id, name: 'Mover' });
      await t.factories.tracker({ runId: w.runA2.id, name: 'Taken' });
      const moved = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ production_run_id: w.runA2.id });
      expect(moved.status).toBe(200);
      expect(moved.body.production_run_id).toBe(w.runA2.id);
      const invisible = await t
        .http()
        .put(`${TRACKERS}/${tracker.id}`)
        .set(w.userA.auth)
        .send({ production_run_id: w.runB.id });
      expect(invisible.status).toBe(404);
      expect(invisible.body).toEqual({ detail: 'Production run not found' });
      const taken = await t.http().put(`${TRACKERS}/${tracker.id}`).set(w.userA.auth).send({ name: 'Taken' });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual({ detail: `Tracker 'Taken' already exists in production run ${w.runA2.id}` });
    });

    it('404 Tracker not found for missing or invisible trackers', async () => {
      const hidden = await t.factories.tracker({ runId: w.runB.id, name: 'Hidden PUT' });
      for (const [id, auth] of [
        [999999, w.admin.auth],
        [hidden.id, w.userA.auth],
      ] as const) {
        const res = await t.http().put(`${TRACKERS}/${id}`).set(auth).send({ notes: 'x' });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: 'Tracker not found' });
      }
      const [row] = await t.db.query('SELECT notes FROM trackers WHERE id = $1', [hidden.id]);
      expect(row.notes).toBeNull();
    });
  });

  describe('DELETE /trackers/{id}', () => {
    it('admin deletes (200 Tracker) and history, reports and aggregates go with it', async () => {
      const tracker = await t.factories.tracker({
        runId: w.runA.id,
        name: 'Doomed',
        history: [{ status: 'IN_TRANSIT', timestamp: hoursAgo(2) }],
      });
      await insertHourlyPoint(t.db, tracker.id, { bucket: '2026-02-01T10:00:00Z', latitude: 3, longitude: 4 });
      await t.db.query(
        `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible) VALUES ($1, '2026-02-01T10:10:00Z', 3, 4, 3, true)`,
        [tracker.id],
      );
      const res = await t.http().delete(`${TRACKERS}/${tracker.id}`).set(w.admin.auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: tracker.id,
        name: 'Doomed',
        status: 'IN_TRANSIT',
        production_run_id: w.runA.id,
      });
      expect(res.body.latest_location).toMatchObject({ latitude: 3, longitude: 4, granularity: 'hourly' });
      expect(await countRows(t.db, 'trackers', 'id = $1', [tracker.id])).toBe(0);
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(0);
      const [{ n }] = await t.db.query(
        `SELECT (SELECT count(*) FROM location_reports WHERE tracker_id = $1) + (SELECT count(*) FROM location_history_hourly WHERE tracker_id = $1) AS n`,
        [tracker.id],
      );
      expect(Number(n)).toBe(0);
      const again = await t.http().delete(`${TRACKERS}/${tracker.id}`).set(w.admin.auth);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ detail: 'Tracker not found' });
    });
  });

  describe('POST /trackers/{id}/status and GET /trackers/{id}/status-history', () => {
    const post = (id: number, body: Record<string, unknown>, auth = w.userA.auth) =>
      t.http().post(`${TRACKERS}/${id}/status`).set(auth).send(body);
    const current = async (id: number) =>
      (
        await t.db.query('SELECT status, storage_location_id, delivery_location_id FROM trackers WHERE id = $1', [id])
      )[0];

    it('201 StatusEntry (exact shape) and the tracker follows it', async () => {
      const tracker = await t.factories.tracker({
        runId: w.runA.id,
        history: [{ status: 'CREATED', timestamp: hoursAgo(5) }],
      });
      const res = await post(tracker.id, {
        status: 'IN_STORAGE',
        storage_location_id: w.storage.id,
        notes: 'dock 4',
        timestamp: '2026-11-01T12:00:00+02:00',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        tracker_id: tracker.id,
        status: 'IN_STORAGE',
        timestamp: '2026-11-01T10:00:00.000Z',
        storage_location_id: w.storage.id,
        delivery_location_id: null,
        notes: 'dock 4',
        created_by: w.userA.id,
        source: 'manual',
        created_at: expect.stringMatching(ISO),
      });
      // back-dated before the CREATED entry? no: CREATED was 5 h ago, this is older → status must stay CREATED
      expect(await current(tracker.id)).toEqual({
        status: 'CREATED',
        storage_location_id: null,
        delivery_location_id: null,
      });
      const now = await post(tracker.id, { status: 'IN_STORAGE', storage_location_id: w.storage2.id });
      expect(now.status).toBe(201);
      expect(await current(tracker.id)).toMatchObject({ status: 'IN_STORAGE', storage_location_id: w.storage2.id });
    });

    it('a back-dated entry does not override a newer state; equal timestamps are decided by id', async () => {
      const tracker = await t.factories.tracker({
        runId: w.runA.id,
        deliveryLocationId: w.delivery.id,
        history: [{ status: 'CREATED', timestamp: hoursAgo(10) }],
      });
      await post(tracker.id, { status: 'IN_TRANSIT', timestamp: hoursAgo(2) }).expect(201);
      await post(tracker.id, {
        status: 'IN_STORAGE',
        storage_location_id: w.storage.id,
        timestamp: hoursAgo(6),
      }).expect(201);
      expect(await current(tracker.id)).toEqual({
        status: 'IN_TRANSIT',
        storage_location_id: null,
        delivery_location_id: w.delivery.id,
      });
      const same = hoursAgo(1);
      await post(tracker.id, { status: 'IN_STORAGE', storage_location_id: w.storage.id, timestamp: same }).expect(201);
      await post(tracker.id, { status: 'DELIVERED', timestamp: same }).expect(201);
      expect(await current(tracker.id)).toEqual({
        status: 'DELIVERED',
        storage_location_id: null,
        delivery_location_id: w.delivery.id,
      });
      const history = await t.http().get(`${TRACKERS}/${tracker.id}/status-history`).set(w.userA.auth);
      expect(history.status).toBe(200);
      expect(history.body.map((e: { status: string }) => e.status)).toEqual([
        'CREATED',
        'IN_STORAGE',
        'IN_TRANSIT',
        'IN_STORAGE',
        'DELIVERED',
      ]);
      const keys = history.body.map((e: { timestamp: string; id: number }) => [e.timestamp, e.id]);
      expect([...keys].sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1))).toEqual(keys);
    });

    it('DELIVERED uses the given location, else the destination; 422 when there is neither', async () => {
      const withDestination = await t.factories.tracker({ runId: w.runA.id, deliveryLocationId: w.delivery.id });
      const byDefault = await post(withDestination.id, { status: 'DELIVERED' });
      expect(byDefault.status).toBe(201);
      expect(byDefault.body.delivery_location_id).toBe(w.delivery.id);
      const explicit = await post(withDestination.id, { status: 'DELIVERED', delivery_location_id: w.delivery2.id });
      expect(explicit.body.delivery_location_id).toBe(w.delivery2.id);
      const noDestination = await t.factories.tracker({ runId: w.runA.id });
      const res = await post(noDestination.id, { status: 'DELIVERED' });
      expect(res.status).toBe(422);
      expect(res.body.detail).toBe(
        'Validation failed: delivery_location_id: is required for DELIVERED when the tracker has no destination',
      );
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [noDestination.id])).toBe(1);
    });

    it('422 for IN_STORAGE without storage, a timestamp > 5 min ahead, bad values; 404 for unknown locations', async () => {
      const tracker = await t.factories.tracker({ runId: w.runA.id });
      const cases: [Record<string, unknown>, string][] = [
        [{ status: 'IN_STORAGE' }, 'Validation failed: storage_location_id: is required when status is IN_STORAGE'],
        [
          { status: 'IN_TRANSIT', timestamp: new Date(Date.now() + 6 * 60_000).toISOString() },
          'Validation failed: timestamp: must not be more than 5 minutes in the future',
        ],
      ];
      for (const [body, detail] of cases) {
        const res = await post(tracker.id, body);
        expect(res.status).toBe(422);
        expect(res.body.detail).toBe(detail);
      }
      for (const body of [
        {},
        { status: 'LOST' },
        { status: 'IN_TRANSIT', timestamp: 'soon' },
        { status: 'IN_TRANSIT', timestamp: '2026-13-01T00:00:00Z' },
        { status: 'IN_TRANSIT', extra: 1 },
      ]) {
        expect((await post(tracker.id, body)).status).toBe(422);
      }
      const unknown = await post(tracker.id, { status: 'IN_STORAGE', storage_location_id: 999999 });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ detail: 'Storage location not found' });
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [tracker.id])).toBe(1);
      await post(tracker.id, {
        status: 'IN_TRANSIT',
        timestamp: new Date(Date.now() + 4 * 60_000).toISOString(),
      }).expect(201);
    });

    it('404 for missing or invisible trackers', async () => {
      const hidden = await t.factories.tracker({ runId: w.runB.id });
      for (const id of [999999, hidden.id]) {
        const res = await post(id, { status: 'IN_TRANSIT' });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: 'Tracker not found' });
      }
      expect(await countRows(t.db, 'tracker_status_history', 'tracker_id = $1', [hidden.id])).toBe(1);
    });

    it('concurrent entries serialize: the tracker ends at the entry with the greatest timestamp', async () => {
      const tracker = await t.factories.tracker({
        runId: w.runA.id,
        history: [{ status: 'CREATED', timestamp: hoursAgo(100) }],
      });
      const states = [
        'IN_TRANSIT',
        'IN_STORAGE',
        'DELIVERED',
        'IN_TRANSIT',
        'IN_STORAGE',
        'DELIVERED',
        'IN_TRANSIT',
        'IN_STORAGE',
      ];
      const bodies = states.map((status, i) => ({
        status,
        timestamp: hoursAgo(50 - ((i * 7) % 8)),
        ...(status === 'IN_STORAGE' ? { storage_location_id: i % 2 ? w.storage.id : w.storage2.id } : {}),
        ...(status === 'DELIVERED' ? { delivery_location_id: w.delivery.id } : {}),
      }));
      const results = await Promise.all(bodies.map((body) => post(tracker.id, body, w.admin.auth)));
      expect(results.map((r) => r.status)).toEqual(states.map(() => 201));
      const [latest] = await t.db.query(
        `SELECT status, storage_location_id FROM tracker_status_history WHERE tracker_id = $1 ORDER BY timestamp DESC, id DESC LIMIT 1`,
        [tracker.id],
      );
      const now = await current(tracker.id);
      expect(now.status).toBe(latest.status);
      expect(now.storage_location_id).toBe(latest.status === 'IN_STORAGE' ? latest.storage_location_id : null);
    });
  });

  describe('GET /trackers/status-counts', () => {
    it('counts visible trackers per status, optionally for one run; not taken for an id', async () => {
      const run = await t.factories.run({ clientId: w.clientA.id });
      for (const status of ['CREATED', 'IN_TRANSIT', 'IN_TRANSIT', 'DELIVERED']) {
        await t.factories.tracker({ runId: run.id, history: [{ status, timestamp: hoursAgo(1) }] });
      }
      const res = await t.http().get(`${TRACKERS}/status-counts?production_run_id=${run.id}`).set(w.userA.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ CREATED: 1, IN_TRANSIT: 2, IN_STORAGE: 0, DELIVERED: 1, total: 4 });

      const expected = async (clientIds: number[] | null) => {
        const rows = await t.db.query(
          `SELECT t.status, count(*)::int AS n FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
            WHERE $1::int[] IS NULL OR pr.client_id = ANY($1) GROUP BY t.status`,
          [clientIds],
        );
        const counts: Record<string, number> = { CREATED: 0, IN_TRANSIT: 0, IN_STORAGE: 0, DELIVERED: 0 };
        for (const r of rows) counts[r.status] = r.n;
        return { ...counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
      };
      expect((await t.http().get(`${TRACKERS}/status-counts`).set(w.userA.auth)).body).toEqual(
        await expected([w.clientA.id]),
      );
      expect((await t.http().get(`${TRACKERS}/status-counts`).set(w.admin.auth)).body).toEqual(await expected(null));
      const hidden = await t.http().get(`${TRACKERS}/status-counts?production_run_id=${w.runB.id}`).set(w.userA.auth);
      expect(hidden.body).toEqual({ CREATED: 0, IN_TRANSIT: 0, IN_STORAGE: 0, DELIVERED: 0, total: 0 });
      expect((await t.http().get(`${TRACKERS}/status-counts?production_run_id=abc`).set(w.admin.auth)).status).toBe(
        422,
      );
    });
  });

  describe('trackers seen from locations', () => {
    it('GET /storage-locations/{id}/trackers: visible trackers currently IN_STORAGE there, with latest_location', async () => {
      const storage = await t.factories.storageLocation();
      const here = await t.factories.tracker({
        runId: w.runA.id,
        history: [{ status: 'IN_STORAGE', timestamp: hoursAgo(3), storageLocationId: storage.id }],
      });
      const left = await t.factories.tracker({
        runId: w.runA.id,
        history: [
          { status: 'IN_STORAGE', timestamp: hoursAgo(3), storageLocationId: storage.id },
          { status: 'IN_TRANSIT', timestamp: hoursAgo(1) },
        ],
      });
      const hidden = await t.factories.tracker({
        runId: w.runB.id,
        history: [{ status: 'IN_STORAGE', timestamp: hoursAgo(3), storageLocationId: storage.id }],
      });
      await insertHourlyPoint(t.db, here.id, { bucket: '2026-02-02T02:00:00Z', latitude: 5, longitude: 6 });
      const res = await t.http().get(`/api/v1/storage-locations/${storage.id}/trackers`).set(w.userA.auth);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 1, page: 1, size: 50, pages: 1 });
      expect(res.body.items).toEqual([
        expect.objectContaining({ id: here.id, status: 'IN_STORAGE', storage_location_id: storage.id }),
      ]);
      expect(res.body.items[0].latest_location).toMatchObject({ latitude: 5, longitude: 6, granularity: 'hourly' });
      const admin = await t
        .http()
        .get(`/api/v1/storage-locations/${storage.id}/trackers?limit=1&skip=1`)
        .set(w.admin.auth);
      expect(admin.body).toMatchObject({ total: 2, page: 2, size: 1, pages: 2 });
      expect(admin.body.items.map((i: { id: number }) => i.id)).toEqual([hidden.id]);
      expect([here.id, hidden.id]).not.toContain(left.id);
      const missing = await t.http().get('/api/v1/storage-locations/999999/trackers').set(w.admin.auth);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ detail: 'Storage location not found' });
      expect((await t.http().get('/api/v1/storage-locations/x/trackers').set(w.admin.auth)).status).toBe(422);
      expect(
        (await t.http().get(`/api/v1/storage-locations/${storage.id}/trackers?limit=0`).set(w.admin.auth)).status,
      ).toBe(422);
    });

    it('GET /delivery-locations/{id}/trackers: visible trackers with that destination, optional status filter', async () => {
      const delivery = await t.factories.deliveryLocation();
      const onTheWay = await t.factories.tracker({
        runId: w.runA.id,
        deliveryLocationId: delivery.id,
        history: [{ status: 'IN_TRANSIT', timestamp: hoursAgo(3) }],
      });
      const arrived = await t.factories.tracker({
        runId: w.runA.id,
        deliveryLocationId: delivery.id,
        history: [{ status: 'DELIVERED', timestamp: hoursAgo(3), deliveryLocationId: delivery.id }],
      });
      await t.factories.tracker({ runId: w.runB.id, deliveryLocationId: delivery.id });
      await t.factories.tracker({ runId: w.runA.id, deliveryLocationId: w.delivery.id });
      const all = await t.http().get(`/api/v1/delivery-locations/${delivery.id}/trackers`).set(w.userA.auth);
      expect(all.status).toBe(200);
      expect(all.body.items.map((i: { id: number }) => i.id)).toEqual([onTheWay.id, arrived.id]);
      expect(all.body.items.every((i: { latest_location: unknown }) => i.latest_location === null)).toBe(true);
      const delivered = await t
        .http()
        .get(`/api/v1/delivery-locations/${delivery.id}/trackers?status=DELIVERED`)
        .set(w.userA.auth);
      expect(delivered.body.items.map((i: { id: number }) => i.id)).toEqual([arrived.id]);
      expect(
        (await t.http().get(`/api/v1/delivery-locations/${delivery.id}/trackers`).set(w.admin.auth)).body.total,
      ).toBe(3);
      expect(
        (await t.http().get(`/api/v1/delivery-locations/${delivery.id}/trackers?status=LOST`).set(w.admin.auth)).status,
      ).toBe(422);
      const missing = await t.http().get('/api/v1/delivery-locations/999999/trackers').set(w.admin.auth);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ detail: 'Delivery location not found' });
    });
  });

  it('documents every tracker route in OpenAPI', async () => {
    const doc = await t.http().get('/openapi.json').expect(200);
    const paths = Object.keys(doc.body.paths);
    for (const path of [
      '/api/v1/trackers',
      '/api/v1/trackers/status-counts',
      '/api/v1/trackers/import-csv',
      '/api/v1/trackers/{id}',
      '/api/v1/trackers/{id}/status-history',
      '/api/v1/trackers/{id}/status',
      '/api/v1/storage-locations/{id}/trackers',
      '/api/v1/delivery-locations/{id}/trackers',
    ]) {
      expect(paths).toContain(path);
    }
    const listParams = doc.body.paths['/api/v1/trackers'].get.parameters.map((p: { name: string }) => p.name);
    expect(listParams).toEqual(
      expect.arrayContaining([
        'id',
        'production_run_id',
        'status',
        'name',
        'sort_by',
        'sort_order',
        'include_latest_location',
        'skip',
        'limit',
      ]),
    );
  });
});
