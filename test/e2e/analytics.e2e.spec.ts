import { CACHE_AREAS } from '../../src/infrastructure/cache/cache-invalidation.js';
import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { AS_OF, buildAnalyticsFixture, type AnalyticsFixture } from '../support/analytics.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

/**
 * Analytics JSON endpoints against hand-computed figures of the fixture in test/support/analytics.ts.
 * All durations below are worked out from the fixture's timestamps, e.g. T1 delivered 03-04 12:00
 * and as_of 03-11 00:00 → 6.5 days at the delivery location.
 */
describe('Production-run analytics (JSON)', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let fx: AnalyticsFixture;
  const base = () => `/api/v1/production-runs/${fx.runId}/analytics`;

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin'));
    fx = await buildAnalyticsFixture(t);
  });
  afterAll(() => t.close());

  const expectedAtAsOf = () => {
    const { trackers: tr, storage } = fx;
    return {
      production_run_id: fx.runId,
      production_run_description: 'Spring batch 2026',
      production_run_start_date: '2026-02-03T04:05:06.000Z',
      production_run_end_date: null,
      total_trackers: 5,
      tracker_analytics: [
        {
          tracker_id: tr.delivered,
          tracker_name: 'T1 delivered',
          total_journey_duration_days: 3.5,
          delivery_location_name: 'Berlin Hub',
          delivery_location_duration_days: 6.5,
          delivery_location_duration_hours: 156,
          current_status: 'DELIVERED',
          journey_completion_percent: 100,
          storage_location_visits: [],
          total_storage_duration_days: 0,
        },
        {
          tracker_id: tr.storedTwice,
          tracker_name: 'T2 storage',
          total_journey_duration_days: 10,
          delivery_location_name: 'Amsterdam DC',
          delivery_location_duration_days: 0,
          delivery_location_duration_hours: 0,
          current_status: 'IN_STORAGE',
          journey_completion_percent: 66.7,
          storage_location_visits: [
            {
              storage_location_id: storage.north,
              location_name: 'Warehouse North',
              arrived_at: '2026-03-02T00:00:00.000Z',
              departed_at: '2026-03-04T00:00:00.000Z',
              duration_days: 2,
            },
            {
              storage_location_id: storage.south,
              location_name: 'Warehouse South',
              arrived_at: '2026-03-05T00:00:00.000Z',
              departed_at: '2026-03-07T00:00:00.000Z',
              duration_days: 2,
            },
            {
              storage_location_id: storage.north,
              location_name: 'Warehouse North',
              arrived_at: '2026-03-07T00:00:00.000Z',
              departed_at: null,
              duration_days: 4,
            },
          ],
          total_storage_duration_days: 8,
        },
        {
          tracker_id: tr.createdOnly,
          tracker_name: 'T3 created',
          total_journey_duration_days: 5,
          delivery_location_name: '',
          delivery_location_duration_days: 0,
          delivery_location_duration_hours: 0,
          current_status: 'CREATED',
          journey_completion_percent: 0,
          storage_location_visits: [],
          total_storage_duration_days: 0,
        },
        {
          tracker_id: tr.deliveredMovedOn,
          tracker_name: 'T4 moved on',
          total_journey_duration_days: 5.25,
          delivery_location_name: 'Amsterdam DC',
          delivery_location_duration_days: 1.75,
          delivery_location_duration_hours: 42,
          current_status: 'IN_TRANSIT',
          journey_completion_percent: 33.3,
          storage_location_visits: [
            {
              storage_location_id: storage.north,
              location_name: 'Warehouse North',
              arrived_at: '2026-02-22T00:00:00.000Z',
              departed_at: '2026-02-25T06:00:00.000Z',
              duration_days: 3.25,
            },
          ],
          total_storage_duration_days: 3.25,
        },
        {
          tracker_id: tr.deliveredLate,
          tracker_name: 'T5 delivered',
          total_journey_duration_days: 1,
          delivery_location_name: 'Berlin Hub',
          delivery_location_duration_days: 2,
          delivery_location_duration_hours: 48,
          current_status: 'DELIVERED',
          journey_completion_percent: 100,
          storage_location_visits: [],
          total_storage_duration_days: 0,
        },
      ],
      // completed = current status DELIVERED (T1, T5); delivered = any DELIVERED entry (T1, T4, T5):
      // (6.5 + 1.75 + 2) / 3 = 3.4166… → 3.42
      aggregate_metrics: {
        total_trackers: 5,
        completed_trackers: 2,
        completion_rate_percent: 40,
        average_delivery_location_duration_days: 3.42,
      },
      delivery_location_performance: [
        {
          location_name: 'Amsterdam DC',
          tracker_count: 1,
          average_duration_days: 1.75,
          min_duration_days: 1.75,
          max_duration_days: 1.75,
        },
        {
          location_name: 'Berlin Hub',
          tracker_count: 2,
          average_duration_days: 4.25,
          min_duration_days: 2,
          max_duration_days: 6.5,
        },
      ],
      // North: T2 2 d + T2 4 d + T4 3.25 d; South: T2 2 d.
      storage_location_performance: [
        {
          storage_location_id: storage.north,
          location_name: 'Warehouse North',
          tracker_count: 2,
          visit_count: 3,
          total_duration_days: 9.25,
          average_duration_days: 3.08,
          min_duration_days: 2,
          max_duration_days: 4,
        },
        {
          storage_location_id: storage.south,
          location_name: 'Warehouse South',
          tracker_count: 1,
          visit_count: 1,
          total_duration_days: 2,
          average_duration_days: 2,
          min_duration_days: 2,
          max_duration_days: 2,
        },
      ],
    };
  };

  it('computes every field per the documented formulas at a fixed as_of', async () => {
    const res = await t.http().get(base()).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(expectedAtAsOf());
    // Served from the cache the second time, identical.
    const again = await t.http().get(base()).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(again.text).toBe(res.text);
  });

  it('honours an earlier as_of everywhere: later entries ignored, open intervals end at as_of', async () => {
    const { trackers: tr, storage } = fx;
    const res = await t.http().get(base()).query({ as_of: '2026-03-03T00:00:00Z' }).set(admin.auth).expect(200);
    const byName = Object.fromEntries(
      res.body.tracker_analytics.map((a: { tracker_name: string }) => [a.tracker_name, a]),
    );
    // Not delivered yet at as_of: the destination's name, no dwell time.
    expect(byName['T1 delivered']).toMatchObject({
      tracker_id: tr.delivered,
      total_journey_duration_days: 2,
      delivery_location_name: 'Berlin Hub',
      delivery_location_duration_days: 0,
      current_status: 'IN_TRANSIT',
      journey_completion_percent: 33.3,
    });
    // The visit that the 03-04 entry closes is still open at 03-03.
    expect(byName['T2 storage']).toMatchObject({
      total_journey_duration_days: 2,
      current_status: 'IN_STORAGE',
      storage_location_visits: [
        {
          storage_location_id: storage.north,
          location_name: 'Warehouse North',
          arrived_at: '2026-03-02T00:00:00.000Z',
          departed_at: null,
          duration_days: 1,
        },
      ],
      total_storage_duration_days: 1,
    });
    // Created after as_of, no entries up to it: nothing to measure yet.
    expect(byName['T3 created']).toMatchObject({
      total_journey_duration_days: 0,
      current_status: 'CREATED',
      journey_completion_percent: 0,
    });
    expect(byName['T5 delivered']).toMatchObject({
      total_journey_duration_days: 0,
      current_status: 'CREATED',
      delivery_location_name: '',
      delivery_location_duration_days: 0,
    });
    expect(byName['T4 moved on']).toMatchObject({
      total_journey_duration_days: 5.25,
      delivery_location_duration_days: 1.75,
      current_status: 'IN_TRANSIT',
    });
    expect(res.body.aggregate_metrics).toEqual({
      total_trackers: 5,
      completed_trackers: 0,
      completion_rate_percent: 0,
      average_delivery_location_duration_days: 1.75,
    });
    expect(res.body.delivery_location_performance).toEqual([
      {
        location_name: 'Amsterdam DC',
        tracker_count: 1,
        average_duration_days: 1.75,
        min_duration_days: 1.75,
        max_duration_days: 1.75,
      },
    ]);
    // (1 + 3.25) / 2 = 2.125 → 2.13
    expect(res.body.storage_location_performance).toEqual([
      {
        storage_location_id: storage.north,
        location_name: 'Warehouse North',
        tracker_count: 2,
        visit_count: 2,
        total_duration_days: 4.25,
        average_duration_days: 2.13,
        min_duration_days: 1,
        max_duration_days: 3.25,
      },
    ]);
  });

  it('accepts as_of without an offset as UTC and with a numeric offset', async () => {
    const utc = await t
      .http()
      .get(`${base()}/summary`)
      .query({ as_of: '2026-03-03T00:00:00' })
      .set(admin.auth)
      .expect(200);
    const offset = await t
      .http()
      .get(`${base()}/summary`)
      .query({ as_of: '2026-03-03T01:00:00+01:00' })
      .set(admin.auth)
      .expect(200);
    expect(utc.body.average_delivery_location_duration_days).toBe(1.75);
    expect(offset.body).toEqual(utc.body);
  });

  it('summary and delivery-performance equal the parts of the full result', async () => {
    for (const asOf of [AS_OF, '2026-03-03T00:00:00Z']) {
      const full = await t.http().get(base()).query({ as_of: asOf }).set(admin.auth).expect(200);
      const summary = await t.http().get(`${base()}/summary`).query({ as_of: asOf }).set(admin.auth).expect(200);
      const delivery = await t
        .http()
        .get(`${base()}/delivery-performance`)
        .query({ as_of: asOf })
        .set(admin.auth)
        .expect(200);
      expect(summary.body).toEqual(full.body.aggregate_metrics);
      expect(delivery.body).toEqual(full.body.delivery_location_performance);
    }
  });

  it('defaults as_of to now: open intervals grow up to the current time', async () => {
    const res = await t.http().get(base()).set(admin.auth).expect(200);
    const t2 = res.body.tracker_analytics.find((a: { tracker_name: string }) => a.tracker_name === 'T2 storage');
    const expectedDays = (Date.now() - Date.parse('2026-03-01T00:00:00Z')) / 86_400_000;
    expect(Math.abs(t2.total_journey_duration_days - expectedDays)).toBeLessThan(0.02);
    expect(t2.storage_location_visits[2].departed_at).toBeNull();
  });

  it('answers an empty run with zeros and empty lists (no division by zero)', async () => {
    const run = await t.factories.run({ description: 'empty' });
    await t.db.query(`UPDATE production_runs SET start_date = NULL WHERE id = $1`, [run.id]); // the factory defaults a null
    const res = await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics`)
      .query({ as_of: AS_OF })
      .set(admin.auth)
      .expect(200);
    expect(res.body).toEqual({
      production_run_id: run.id,
      production_run_description: 'empty',
      production_run_start_date: null,
      production_run_end_date: null,
      total_trackers: 0,
      tracker_analytics: [],
      aggregate_metrics: {
        total_trackers: 0,
        completed_trackers: 0,
        completion_rate_percent: 0,
        average_delivery_location_duration_days: 0,
      },
      delivery_location_performance: [],
      storage_location_performance: [],
    });
    const summary = await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics/summary`)
      .set(admin.auth)
      .expect(200);
    expect(summary.body).toEqual(res.body.aggregate_metrics);
    await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics/delivery-performance`)
      .set(admin.auth)
      .expect(200, []);
  });

  it('writes names with JSON metacharacters and sub-second timestamps exactly (the SQL writes this JSON)', async () => {
    const run = await t.factories.run();
    const name = 'Quote " back\\slash \u00e9\u6f22 tab\t/';
    const place = await t.factories.storageLocation('Dock "7" \\ east');
    const tracker = await t.factories.tracker({
      runId: run.id,
      name,
      createdAt: '2026-03-01T00:00:00Z',
      history: [
        { status: 'IN_STORAGE', timestamp: '2026-03-01T10:11:12.345678Z', storageLocationId: place.id },
        { status: 'IN_TRANSIT', timestamp: '2026-03-02T10:11:12.999Z' },
      ],
    });
    const res = await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics`)
      .query({ as_of: '2026-03-04T00:00:00Z' })
      .set(admin.auth)
      .expect(200);
    expect(res.body.tracker_analytics).toEqual([
      {
        tracker_id: tracker.id,
        tracker_name: name,
        total_journey_duration_days: 2.58,
        delivery_location_name: '',
        delivery_location_duration_days: 0,
        delivery_location_duration_hours: 0,
        current_status: 'IN_TRANSIT',
        journey_completion_percent: 33.3,
        storage_location_visits: [
          // Microseconds are cut to milliseconds, as Date#toISOString would show them.
          {
            storage_location_id: place.id,
            location_name: 'Dock "7" \\ east',
            arrived_at: '2026-03-01T10:11:12.345Z',
            departed_at: '2026-03-02T10:11:12.999Z',
            duration_days: 1,
          },
        ],
        total_storage_duration_days: 1,
      },
    ]);
  });

  it('rounds percentages and durations to two decimals (1 of 3 completed → 33.33 %)', async () => {
    const run = await t.factories.run();
    const at = (d: string) => `2026-03-0${d}`;
    // Delivered for 20 h = 0.8333… days; journey 1 d 1 h = 1.0416… days.
    await t.factories.tracker({
      runId: run.id,
      createdAt: at('1T00:00:00Z'),
      history: [
        { status: 'CREATED', timestamp: at('1T00:00:00Z') },
        { status: 'DELIVERED', timestamp: at('2T01:00:00Z') },
        { status: 'IN_TRANSIT', timestamp: at('2T21:00:00Z') },
        { status: 'DELIVERED', timestamp: at('3T00:00:00Z') },
      ],
    });
    for (const name of ['a', 'b']) {
      await t.factories.tracker({
        runId: run.id,
        name,
        createdAt: at('1T00:00:00Z'),
        history: [{ status: 'IN_TRANSIT', timestamp: at('1T00:00:00Z') }],
      });
    }
    const res = await t
      .http()
      .get(`/api/v1/production-runs/${run.id}/analytics`)
      .query({ as_of: '2026-03-04T00:00:00Z' })
      .set(admin.auth)
      .expect(200);
    expect(res.body.tracker_analytics[0]).toMatchObject({
      total_journey_duration_days: 1.04,
      delivery_location_duration_days: 0.83,
      delivery_location_duration_hours: 20,
      current_status: 'DELIVERED',
    });
    expect(res.body.aggregate_metrics).toEqual({
      total_trackers: 3,
      completed_trackers: 1,
      completion_rate_percent: 33.33,
      average_delivery_location_duration_days: 0.83,
    });
  });

  describe('access', () => {
    const paths = ['', '/summary', '/delivery-performance', '/csv'];

    it('lets a user with the run client read every endpoint', async () => {
      const user = await t.factories.user({ clients: [fx.clientId] });
      for (const path of paths)
        await t.http().get(`${base()}${path}`).query({ as_of: AS_OF }).set(user.auth).expect(200);
    });

    it('answers 404 "Production run not found" for a user of another client and for a missing run', async () => {
      const other = await t.factories.client();
      const user = await t.factories.user({ clients: [other.id] });
      for (const path of paths) {
        const invisible = await t.http().get(`${base()}${path}`).set(user.auth).expect(404);
        expect(invisible.body).toEqual({ detail: 'Production run not found' });
        const missing = await t
          .http()
          .get(`/api/v1/production-runs/99999999/analytics${path}`)
          .set(admin.auth)
          .expect(404);
        expect(missing.body).toEqual({ detail: 'Production run not found' });
      }
    });

    it('refuses ingest with 403 and a missing token with 401', async () => {
      const ingest = await t.factories.ingest();
      for (const path of paths) {
        const denied = await t.http().get(`${base()}${path}`).set(ingest.auth).expect(403);
        expect(denied.body).toEqual({ detail: 'Not enough permissions' });
        const anonymous = await t.http().get(`${base()}${path}`).expect(401);
        expect(anonymous.body).toEqual({ detail: 'Not authenticated' });
      }
    });
  });

  describe('validation', () => {
    it.each(['yesterday', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-03-01T25:00:00Z', ''])(
      'rejects as_of=%p with 422',
      async (asOf) => {
        for (const path of ['', '/summary', '/delivery-performance', '/csv']) {
          const res = await t.http().get(`${base()}${path}`).query({ as_of: asOf }).set(admin.auth).expect(422);
          expect(res.body.errors).toEqual([
            { field: 'as_of', message: 'must be an ISO 8601 date-time (year 1970 or later)' },
          ]);
        }
      },
    );

    it('rejects a non-integer run id and unknown query parameters with 422', async () => {
      await t.http().get('/api/v1/production-runs/abc/analytics').set(admin.auth).expect(422);
      await t.http().get('/api/v1/production-runs/0/analytics/summary').set(admin.auth).expect(422);
      const res = await t.http().get(`${base()}/summary`).query({ bogus: 1 }).set(admin.auth).expect(422);
      expect(res.body.detail).toMatch(/^Validation failed: bogus/);
    });
  });

  describe('caching', () => {
    it('serves a cached result until a write in the run bumps its area', async () => {
      const run = await t.factories.run();
      const tracker = await t.factories.tracker({
        runId: run.id,
        name: 'cached',
        createdAt: '2026-03-01T00:00:00Z',
        history: [{ status: 'CREATED', timestamp: '2026-03-01T00:00:00Z' }],
      });
      const url = `/api/v1/production-runs/${run.id}/analytics`;
      const first = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(200);
      expect(first.body.aggregate_metrics.completed_trackers).toBe(0);

      // A write that bypasses the service (no bump) is not seen: the result comes from the cache.
      await t.db.query(
        `INSERT INTO tracker_status_history (tracker_id, status, timestamp) VALUES ($1, 'DELIVERED', '2026-03-05T00:00:00Z')`,
        [tracker.id],
      );
      const cached = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(200);
      expect(cached.body).toEqual(first.body);

      await t.app.get(CacheService).bump(CACHE_AREAS.runAnalytics(run.id));
      const fresh = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(200);
      expect(fresh.body.aggregate_metrics).toMatchObject({ completed_trackers: 1, completion_rate_percent: 100 });
      expect(fresh.body.tracker_analytics[0]).toMatchObject({
        current_status: 'DELIVERED',
        delivery_location_duration_days: 6,
      });
    });

    it('is invalidated by a status entry added through the trackers API', async () => {
      const run = await t.factories.run();
      const tracker = await t.factories.tracker({
        runId: run.id,
        createdAt: '2026-03-01T00:00:00Z',
        history: [{ status: 'IN_TRANSIT', timestamp: '2026-03-01T00:00:00Z' }],
      });
      const delivery = await t.factories.deliveryLocation();
      const url = `/api/v1/production-runs/${run.id}/analytics/summary`;
      const before = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(200);
      expect(before.body.completed_trackers).toBe(0);
      await t
        .http()
        .post(`/api/v1/trackers/${tracker.id}/status`)
        .set(admin.auth)
        .send({ status: 'DELIVERED', timestamp: '2026-03-05T00:00:00Z', delivery_location_id: delivery.id })
        .expect(201);
      const after = await t.http().get(url).query({ as_of: AS_OF }).set(admin.auth).expect(200);
      expect(after.body).toMatchObject({
        completed_trackers: 1,
        completion_rate_percent: 100,
        average_delivery_location_duration_days: 6,
      });
    });

    it('checks visibility on every request, even when the result is cached', async () => {
      const client = await t.factories.client();
      const user = await t.factories.user({ clients: [client.id] });
      const run = await t.factories.run({ clientId: client.id });
      const url = `/api/v1/production-runs/${run.id}/analytics/summary`;
      await t.http().get(url).query({ as_of: AS_OF }).set(user.auth).expect(200);
      // The brand moves to another client: same caller scope, but the run is no longer visible.
      const other = await t.factories.client();
      await t.db.query(`UPDATE brands SET client_id = $1 WHERE id = $2`, [other.id, run.brand_id]);
      const res = await t.http().get(url).query({ as_of: AS_OF }).set(user.auth).expect(404);
      expect(res.body).toEqual({ detail: 'Production run not found' });
    });
  });
});
