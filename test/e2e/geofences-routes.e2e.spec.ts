import { GEOFENCE_ON, type TestApp } from '../support/app.js';
import { at, createPlace, north, ORIGIN, settled } from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { createTrackerWorld, TRACKERS, uploadCsv, type TrackerWorld } from '../support/trackers.js';

/** Geofence fields of locations, the visit routes, and the `source` of status entries. */
describe('geofences: location fields, visit routes, entry sources', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld({ env: GEOFENCE_ON })));
  afterAll(() => t.close());

  for (const kind of ['storage', 'delivery'] as const) {
    const url = `/api/v1/${kind}-locations`;

    it(`${kind} locations take radius_m (default 250) and dwell_minutes (default null) on create and update`, async () => {
      const plain = await t.http().post(url).set(w.admin.auth).send({ name: 'Plain' }).expect(201);
      expect(plain.body).toMatchObject({ radius_m: 250, dwell_minutes: null });
      const res = await t
        .http()
        .post(url)
        .set(w.admin.auth)
        .send({ name: 'Fenced', ...ORIGIN, radius_m: 10, dwell_minutes: 0 })
        .expect(201);
      expect(res.body).toMatchObject({ radius_m: 10, dwell_minutes: 0 });
      const updated = await t
        .http()
        .put(`${url}/${res.body.id}`)
        .set(w.admin.auth)
        .send({ radius_m: 100000, dwell_minutes: 10080 })
        .expect(200);
      expect(updated.body).toMatchObject({ name: 'Fenced', radius_m: 100000, dwell_minutes: 10080 });
      const cleared = await t
        .http()
        .put(`${url}/${res.body.id}`)
        .set(w.admin.auth)
        .send({ dwell_minutes: null })
        .expect(200);
      expect(cleared.body).toMatchObject({ radius_m: 100000, dwell_minutes: null });
      expect((await t.http().get(`${url}/${res.body.id}`).set(w.userA.auth).expect(200)).body).toMatchObject({
        radius_m: 100000,
        dwell_minutes: null,
      });
    });

    it(`${kind} locations refuse radius_m / dwell_minutes outside their ranges with 422`, async () => {
      const [place] = await t.db.query(`SELECT id FROM ${kind}_locations ORDER BY id LIMIT 1`);
      for (const [field, value] of [
        ['radius_m', 9],
        ['radius_m', 100001],
        ['radius_m', null],
        ['radius_m', 12.5],
        ['radius_m', '300'],
        ['dwell_minutes', -1],
        ['dwell_minutes', 10081],
        ['dwell_minutes', 1.5],
      ] as const) {
        for (const res of [
          await t
            .http()
            .post(url)
            .set(w.admin.auth)
            .send({ name: 'Bad', [field]: value }),
          await t
            .http()
            .put(`${url}/${place.id}`)
            .set(w.admin.auth)
            .send({ [field]: value }),
        ]) {
          expect(res.status).toBe(422);
          expect(res.body.detail).toMatch(new RegExp(`^Validation failed: ${field}: `));
          expect(res.body.errors.length).toBeGreaterThan(0);
          expect(res.body.errors.every((e: { field: string }) => e.field === field)).toBe(true);
        }
      }
      expect((await t.db.query(`SELECT count(*)::int AS n FROM ${kind}_locations WHERE name = 'Bad'`))[0].n).toBe(0);
    });
  }

  it('visit routes: Page newest first, filters confirmed/open, scoped, 404s; a visited location cannot be deleted', async () => {
    // Away from the locations of the tests above (one of them has a 100 km radius).
    const HERE = { latitude: -60, longitude: 40 };
    const S = await createPlace(t, w.admin.auth, 'storage', { ...HERE, radius_m: 300, dwell_minutes: 20 });
    const D = await createPlace(t, w.admin.auth, 'delivery', {
      ...north(10_000, HERE),
      radius_m: 300,
      dwell_minutes: 0,
    });
    const mine = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    const theirs = await t.factories.tracker({ runId: w.runB.id, createdAt: at(0) });
    for (const id of [mine.id, theirs.id]) {
      const res = await postReports(t, w.ingest, [
        report(id, at(1), HERE),
        report(id, at(5), HERE),
        report(id, at(9), north(-5000, HERE)),
        report(id, at(20), north(10_000, HERE)),
        report(id, at(30), HERE),
      ]);
      expect(res.status).toBe(200);
    }
    await settled(t);

    const page = await t.http().get(`${TRACKERS}/${mine.id}/visits`).set(w.userA.auth).expect(200);
    expect(page.body).toEqual({
      total: 3,
      page: 1,
      size: 50,
      pages: 1,
      items: [
        {
          id: expect.any(Number),
          tracker_id: mine.id,
          location_type: 'storage',
          location_id: S.id,
          location_name: S.name,
          entered_at: at(30),
          last_seen_at: at(30),
          exited_at: null,
          duration_minutes: 0,
          report_count: 1,
          confirmed: false,
        },
        {
          id: expect.any(Number),
          tracker_id: mine.id,
          location_type: 'delivery',
          location_id: D.id,
          location_name: D.name,
          entered_at: at(20),
          last_seen_at: at(20),
          exited_at: at(30),
          duration_minutes: 0,
          report_count: 1,
          confirmed: true,
        },
        {
          id: expect.any(Number),
          tracker_id: mine.id,
          location_type: 'storage',
          location_id: S.id,
          location_name: S.name,
          entered_at: at(1),
          last_seen_at: at(5),
          exited_at: at(9),
          duration_minutes: 4,
          report_count: 2,
          confirmed: false,
        },
      ],
    });
    const filtered = async (path: string, query: string) =>
      (await t.http().get(`${path}?${query}`).set(w.userA.auth).expect(200)).body.items.map(
        (v: { entered_at: string }) => v.entered_at,
      );
    expect(await filtered(`${TRACKERS}/${mine.id}/visits`, 'confirmed=true')).toEqual([at(20)]);
    expect(await filtered(`${TRACKERS}/${mine.id}/visits`, 'open=false&confirmed=false')).toEqual([at(1)]);
    expect(await filtered(`${TRACKERS}/${mine.id}/visits`, 'open=true')).toEqual([at(30)]);
    expect(await filtered(`${TRACKERS}/${mine.id}/visits`, 'limit=1&skip=1')).toEqual([at(20)]);
    // Location views list visible trackers only; the admin sees both.
    expect(await filtered(`/api/v1/storage-locations/${S.id}/visits`, '')).toEqual([at(30), at(1)]);
    const all = await t.http().get(`/api/v1/storage-locations/${S.id}/visits`).set(w.admin.auth).expect(200);
    expect(all.body.total).toBe(4);
    expect(await filtered(`/api/v1/delivery-locations/${D.id}/visits`, 'confirmed=true')).toEqual([at(20)]);

    expect((await t.http().get(`${TRACKERS}/${theirs.id}/visits`).set(w.userA.auth).expect(404)).body).toEqual({
      detail: 'Tracker not found',
    });
    expect((await t.http().get(`${TRACKERS}/999999/visits`).set(w.userA.auth).expect(404)).body).toEqual({
      detail: 'Tracker not found',
    });
    expect((await t.http().get('/api/v1/storage-locations/999999/visits').set(w.userA.auth).expect(404)).body).toEqual({
      detail: 'Storage location not found',
    });
    expect((await t.http().get('/api/v1/delivery-locations/999999/visits').set(w.userA.auth).expect(404)).body).toEqual(
      { detail: 'Delivery location not found' },
    );
    const bad = await t.http().get(`${TRACKERS}/${mine.id}/visits?confirmed=maybe`).set(w.userA.auth).expect(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'confirmed' })]);

    const refused = await t.http().delete(`/api/v1/storage-locations/${S.id}`).set(w.admin.auth).expect(409);
    expect(refused.body).toEqual({ detail: 'Storage location is still referenced by visits' });
    // The delivery made D the trackers' destination, the first reference the check reports.
    const refusedD = await t.http().delete(`/api/v1/delivery-locations/${D.id}`).set(w.admin.auth).expect(409);
    expect(refusedD.body).toEqual({ detail: 'Delivery location is still referenced by trackers' });
  });

  it('status entries say where they came from: manual (API, PUT), import (CSV), geofence (automation)', async () => {
    const created = await t
      .http()
      .post(TRACKERS)
      .set(w.userA.auth)
      .send({ name: 'src-api', production_run_id: w.runA.id })
      .expect(201);
    const posted = await t
      .http()
      .post(`${TRACKERS}/${created.body.id}/status`)
      .set(w.userA.auth)
      .send({ status: 'IN_TRANSIT' })
      .expect(201);
    expect(posted.body.source).toBe('manual');
    await t.http().put(`${TRACKERS}/${created.body.id}`).set(w.userA.auth).send({ status: 'CREATED' }).expect(200);
    await uploadCsv(t, w.userA.auth, `name,production_run_id\nsrc-csv,${w.runA.id}\n`).expect(201);
    const [imported] = await t.db.query("SELECT id FROM trackers WHERE name = 'src-csv'");
    const sources = async (id: number) =>
      (await t.http().get(`${TRACKERS}/${id}/status-history`).set(w.userA.auth).expect(200)).body.map(
        (e: { source: string }) => e.source,
      );
    expect(await sources(created.body.id)).toEqual(['manual', 'manual', 'manual']);
    expect(await sources(imported.id)).toEqual(['import']);
    const detail = await t.http().get(`${TRACKERS}/${imported.id}`).set(w.userA.auth).expect(200);
    expect(detail.body.status_history[0].source).toBe('import');
  });

  it('documents the visit routes and the new fields in OpenAPI', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    for (const path of [
      '/api/v1/trackers/{id}/visits',
      '/api/v1/storage-locations/{id}/visits',
      '/api/v1/delivery-locations/{id}/visits',
    ]) {
      expect(doc.paths[path].get.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining(['id', 'confirmed', 'open', 'skip', 'limit']),
      );
    }
    expect(Object.keys(doc.components.schemas.VisitResponse.properties)).toContain('duration_minutes');
    expect(doc.components.schemas.StatusEntryResponse.properties.source.enum).toEqual(['manual', 'import', 'geofence']);
  });
});
