import { jest } from '@jest/globals';
import { closeApps, redisAvailable, type TestApp } from '../support/app.js';
import {
  createTrackerWorld,
  createTwoInstances,
  insertHourlyPoint,
  TRACKERS,
  uploadCsv,
  type TrackerWorld,
} from '../support/trackers.js';
import { withinBound } from '../support/eventually.js';
import { postReports, report } from '../support/locations.js';
import { InvalidationBus } from '../../src/infrastructure/cache/invalidation-bus.js';

describe('Trackers: cached lists and counts', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  const list = (query: string, auth = w.admin.auth) => t.http().get(`${TRACKERS}?${query}`).set(auth);

  it('MISS then HIT for the same scope and normalized query; different queries and scopes miss', async () => {
    await t.factories.tracker({ runId: w.runA.id, name: 'cached-1' });
    const q = `production_run_id=${w.runA.id}&status=CREATED,IN_TRANSIT&id=`;
    const first = await list(`${q}&sort_by=id`);
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.body.total).toBe(1); // an empty `id=` is no filter
    const second = await list(`${q}&sort_by=id`);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.body).toEqual(first.body);
    // the same query written differently (order of list items, case, explicit defaults) is the same entry
    const normalized = await list(
      `production_run_id=${w.runA.id}&status=in_transit,CREATED&sort_order=asc&skip=0&limit=50`,
    );
    expect(normalized.headers['x-cache']).toBe('HIT');
    expect((await list(`production_run_id=${w.runA.id}&limit=10`)).headers['x-cache']).toBe('MISS');
    // another scope never reads the admin's entry
    expect((await list(`${q}&sort_by=id`, w.userA.auth)).headers['x-cache']).toBe('MISS');
    expect((await list(`${q}&sort_by=id`, w.userA.auth)).headers['x-cache']).toBe('HIT');
  });

  it('counts a filtered list once for all its pages, and recounts after a write', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    for (let i = 0; i < 3; i++) await t.factories.tracker({ runId: run.id, name: `paged-${i}` });
    const page1 = await list(`production_run_id=${run.id}&limit=1`);
    expect(page1.body).toMatchObject({ total: 3, pages: 3 });
    // a row written behind the service's back (no invalidation) shows the total really is cached
    await t.factories.tracker({ runId: run.id, name: 'paged-sideways' });
    // another page of the same filter is a page-cache MISS but reuses the cached total
    const page2 = await list(`production_run_id=${run.id}&limit=1&skip=1`);
    expect(page2.headers['x-cache']).toBe('MISS');
    expect(page2.body).toMatchObject({ total: 3, page: 2 });
    // a write through the API bumps the generation: the next page sees the new total
    await t.http().post(TRACKERS).set(w.admin.auth).send({ name: 'paged-new', production_run_id: run.id }).expect(201);
    const page3 = await list(`production_run_id=${run.id}&limit=1&skip=2`);
    expect(page3.body).toMatchObject({ total: 5, pages: 5 });
  });

  it('status-counts is cached too', async () => {
    const first = await t.http().get(`${TRACKERS}/status-counts?production_run_id=${w.runA.id}`).set(w.admin.auth);
    expect(first.headers['x-cache']).toBe('MISS');
    const second = await t.http().get(`${TRACKERS}/status-counts?production_run_id=${w.runA.id}`).set(w.admin.auth);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.body).toEqual(first.body);
  });

  it('latest locations are attached fresh on a HIT (location ingestion needs no invalidation)', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA2.id, name: 'located' });
    const q = `production_run_id=${w.runA2.id}&include_latest_location=true`;
    const miss = await list(q);
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.body.items[0].latest_location).toBeNull();
    // written in SQL, behind the service's back: the trigger's invalidation reaches it within the bound
    await insertHourlyPoint(t.db, tracker.id, { bucket: '2026-03-03T03:00:00Z', latitude: 12, longitude: 34 });
    const hit = await withinBound(
      () => list(q),
      (res) => res.body.items?.[0]?.latest_location !== null,
    );
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.body.items[0].latest_location).toMatchObject({ latitude: 12, longitude: 34 });
    // the cached rows never carry a location: without the flag it is null
    const plain = await list(`production_run_id=${w.runA2.id}`);
    expect(plain.headers['x-cache']).toBe('HIT');
    expect(plain.body.items[0].latest_location).toBeNull();
  });

  it("an instance's own ingest shows at once in its lists with latest locations, however late the trigger's message", async () => {
    const run = await t.factories.run({ clientId: w.clientB.id });
    const tracker = await t.factories.tracker({ runId: run.id, name: 'ingested' });
    const q = `production_run_id=${run.id}&include_latest_location=true`;
    expect((await list(q)).body.items[0].latest_location).toBeNull();
    expect((await list(q)).headers['x-cache']).toBe('HIT');
    // the invalidation channel is slow today: its messages arrive half a second late
    const bus = t.app.get(InvalidationBus) as unknown as { deliver(keys: string[]): void };
    const deliver = bus.deliver.bind(bus);
    const slow = jest.spyOn(bus, 'deliver').mockImplementation((keys) => void setTimeout(() => deliver(keys), 500));
    try {
      const at = new Date(Date.now() - 60_000).toISOString();
      await postReports(t, w.ingest, [report(tracker.id, at, { latitude: 48.1, longitude: 11.6 })]).expect(200);
      const after = await list(q);
      expect(after.body.items[0].latest_location).toMatchObject({ latitude: 48.1, longitude: 11.6 });
    } finally {
      slow.mockRestore();
    }
  });

  it('create, update, status, delete and import invalidate lists and counts', async () => {
    const q = `production_run_id=${w.runA.id}&limit=1000`;
    const counts = () => t.http().get(`${TRACKERS}/status-counts?production_run_id=${w.runA.id}`).set(w.admin.auth);
    const warm = async () => {
      await list(q);
      await counts();
      expect((await list(q)).headers['x-cache']).toBe('HIT');
      expect((await counts()).headers['x-cache']).toBe('HIT');
    };
    const expectFresh = async (
      check: (items: { id: number; name: string; status: string }[], total: number) => void,
    ) => {
      const res = await list(q);
      expect(res.headers['x-cache']).toBe('MISS');
      check(res.body.items, res.body.total);
      expect((await counts()).headers['x-cache']).toBe('MISS');
    };

    await warm();
    const created = await t
      .http()
      .post(TRACKERS)
      .set(w.userA.auth)
      .send({ name: 'fresh', production_run_id: w.runA.id })
      .expect(201);
    await expectFresh((items) => expect(items.map((i) => i.name)).toContain('fresh'));

    await warm();
    await t.http().put(`${TRACKERS}/${created.body.id}`).set(w.userA.auth).send({ name: 'renamed' }).expect(200);
    await expectFresh((items) => expect(items.map((i) => i.name)).toContain('renamed'));

    await warm();
    await t
      .http()
      .post(`${TRACKERS}/${created.body.id}/status`)
      .set(w.userA.auth)
      .send({ status: 'IN_TRANSIT' })
      .expect(201);
    await expectFresh((items) => expect(items.find((i) => i.id === created.body.id)?.status).toBe('IN_TRANSIT'));

    await warm();
    await uploadCsv(t, w.userA.auth, 'name\nimported-1\nimported-2\n', `production_run_id=${w.runA.id}`).expect(201);
    await expectFresh((items) =>
      expect(items.map((i) => i.name)).toEqual(expect.arrayContaining(['imported-1', 'imported-2'])),
    );

    await warm();
    await uploadCsv(t, w.userA.auth, 'name\nimported-3\n', `production_run_id=${w.runA.id}&dry_run=true`).expect(201);
    expect((await list(q)).headers['x-cache']).toBe('HIT');

    await warm();
    await t.http().delete(`${TRACKERS}/${created.body.id}`).set(w.admin.auth).expect(200);
    await expectFresh((items) => expect(items.map((i) => i.id)).not.toContain(created.body.id));
  });

  it('a failed write does not invalidate', async () => {
    const q = `production_run_id=${w.runA.id}`;
    await list(q);
    expect((await list(q)).headers['x-cache']).toBe('HIT');
    await t.http().post(TRACKERS).set(w.admin.auth).send({ name: 'x', production_run_id: 999999 }).expect(404);
    expect((await list(q)).headers['x-cache']).toBe('HIT');
  });

  it('bumps the analytics cache area of every affected run', async () => {
    const cache = t.app.get((await import('../../src/infrastructure/cache/cache.service.js')).CacheService);
    const tracker = await t.factories.tracker({ runId: w.runA.id, name: 'run-mover' });
    const before = await cache.generations([
      `analytics:run:${w.runA.id}`,
      `analytics:run:${w.runA2.id}`,
      `analytics:run:${w.runB.id}`,
    ]);
    await t
      .http()
      .put(`${TRACKERS}/${tracker.id}`)
      .set(w.admin.auth)
      .send({ production_run_id: w.runA2.id })
      .expect(200);
    const after = await cache.generations([
      `analytics:run:${w.runA.id}`,
      `analytics:run:${w.runA2.id}`,
      `analytics:run:${w.runB.id}`,
    ]);
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    expect(after[2]).toBe(before[2]);
  });
});

const describeWithRedis = redisAvailable ? describe : describe.skip;
if (!redisAvailable) console.warn('trackers-cache: cross-instance invalidation skipped — set REDIS_URL to run it');

describeWithRedis('Trackers: invalidation across instances sharing Redis', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ a, b, w } = await createTwoInstances()));
  afterAll(() => closeApps(b, a));

  it('a write on instance A is seen by instance B within 1 s (and the reverse)', async () => {
    const q = `${TRACKERS}?production_run_id=${w.runA.id}`;
    const counts = `${TRACKERS}/status-counts?production_run_id=${w.runA.id}`;
    expect((await b.http().get(q).set(w.admin.auth)).headers['x-cache']).toBe('MISS');
    const shared = await a.http().get(q).set(w.admin.auth);
    expect(shared.headers['x-cache']).toBe('HIT'); // B's entry, read by A: the store is shared
    expect(shared.body.total).toBe(0);
    await b.http().get(counts).set(w.admin.auth);

    // The other instance drops its in-process copies when the invalidation reaches it: within 1 s.
    const created = await a
      .http()
      .post(TRACKERS)
      .set(w.admin.auth)
      .send({ name: 'seen-everywhere', production_run_id: w.runA.id })
      .expect(201);
    const onB = await withinBound(
      () => b.http().get(q).set(w.admin.auth),
      (res) => res.body.total === 1,
    );
    expect(onB.headers['x-cache']).toBe('MISS');
    expect(onB.body.items.map((i: { name: string }) => i.name)).toEqual(['seen-everywhere']);
    const countsOnB = await withinBound(
      () => b.http().get(counts).set(w.admin.auth),
      (res) => res.body.total === 1,
    );
    expect(countsOnB.headers['x-cache']).toBe('MISS');
    expect(countsOnB.body).toMatchObject({ CREATED: 1, total: 1 });

    await b
      .http()
      .post(`${TRACKERS}/${created.body.id}/status`)
      .set(w.admin.auth)
      .send({ status: 'IN_TRANSIT' })
      .expect(201);
    const onA = await withinBound(
      () => a.http().get(q).set(w.admin.auth),
      (res) => res.body.items?.[0]?.status === 'IN_TRANSIT',
    );
    expect(onA.headers['x-cache']).toBe('MISS');
    expect(onA.body.items[0].status).toBe('IN_TRANSIT');
  });
});
