import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { aggregateTables, postReports, rawReports, report } from '../support/locations.js';

const EMPTY_RESULT = {
  accepted: 0,
  duplicates: 0,
  rejected: [],
  aggregated: 0,
  filtered_low_confidence: 0,
  filtered_manufacturing_region: 0,
};

describe('Locations: report ingestion and aggregation rules', () => {
  let t: TestApp;
  let ingest: CreatedUser;
  let admin: CreatedUser;

  beforeAll(async () => {
    ({ t, user: ingest } = await createTestAppWithUser('ingest'));
    admin = await t.factories.admin();
  });
  afterAll(() => t.close());

  const newTracker = async () => (await t.factories.tracker()).id;
  const hourly = async (trackerId: number) => (await aggregateTables(t.db, [trackerId])).hourly;
  const daily = async (trackerId: number) => (await aggregateTables(t.db, [trackerId])).daily;

  describe('access and body shape', () => {
    it('admits admin and ingest, refuses user (403) and anonymous (401) on both routes', async () => {
      const id = await newTracker();
      const user = await t.factories.user();
      const body = { reports: [report(id, '2026-01-01T00:00:00Z')] };
      await t.http().post('/api/v1/locations/reports').send(body).expect(401);
      const denied = await t.http().post('/api/v1/locations/reports').set(user.auth).send(body).expect(403);
      expect(denied.body).toEqual({ detail: 'Not enough permissions' });
      await t.http().post(`/api/v1/trackers/${id}/locations`).set(user.auth).send(body).expect(403);
      await t.http().post('/api/v1/locations/reports').set(admin.auth).send(body).expect(200);
      await t
        .http()
        .post(`/api/v1/trackers/${id}/locations`)
        .set(ingest.auth)
        .send({ timestamp: '2026-01-01T00:00:01Z', latitude: 1, longitude: 1, confidence: 2 })
        .expect(200);
    });

    it.each([
      ['an array body', [report(1, '2026-01-01T00:00:00Z')], 'body'],
      ['reports missing', {}, 'reports'],
      ['reports not an array', { reports: { a: 1 } }, 'reports'],
      ['an empty list', { reports: [] }, 'reports'],
      ['an unknown top-level field', { reports: [report(1, '2026-01-01T00:00:00Z')], extra: 1 }, 'extra'],
    ])('answers 422 for a malformed body: %s', async (_name, body, field) => {
      const res = await t
        .http()
        .post('/api/v1/locations/reports')
        .set(ingest.auth)
        .send(body as object)
        .expect(422);
      expect(res.body.detail).toMatch(/^Validation failed: /);
      expect(res.body.errors[0].field).toBe(field);
    });

    it('answers 422 for more than 10 000 reports and stores nothing', async () => {
      const id = await newTracker();
      const reports = Array.from({ length: 10_001 }, (_, i) =>
        report(id, new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString()),
      );
      const res = await postReports(t, ingest, reports).expect(422);
      expect(res.body.detail).toBe('Validation failed: reports: must contain between 1 and 10000 reports');
      expect(await rawReports(t.db, [id])).toEqual([]);
    });

    it('accepts exactly 10 000 reports in one batch', async () => {
      const id = await newTracker();
      const reports = Array.from({ length: 10_000 }, (_, i) =>
        report(id, new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString()),
      );
      const res = await postReports(t, ingest, reports).expect(200);
      expect(res.body).toEqual({ ...EMPTY_RESULT, accepted: 10_000, aggregated: 10_000 });
      // 10 000 minutes = 166.7 hours over 7 days.
      expect(await hourly(id)).toHaveLength(167);
      expect(await daily(id)).toHaveLength(7);
    });

    it('documents both routes and the history route in OpenAPI', async () => {
      const doc = (await t.http().get('/openapi.json').expect(200)).body;
      const batch = doc.paths['/api/v1/locations/reports'].post;
      expect(batch.requestBody.content['application/json'].schema.$ref).toMatch(/LocationReportBatchDto$/);
      expect(Object.keys(batch.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '422']));
      expect(
        doc.paths['/api/v1/trackers/{id}/locations'].post.requestBody.content['application/json'].schema.oneOf,
      ).toHaveLength(2);
      const history = doc.paths['/api/v1/trackers/{id}/location-history'].get;
      expect(history.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining(['id', 'skip', 'limit', 'start_date', 'end_date', 'granularity', 'order']),
      );
      expect(doc.components.schemas.IngestResultResponse.required).toEqual(
        expect.arrayContaining([
          'accepted',
          'duplicates',
          'rejected',
          'aggregated',
          'filtered_low_confidence',
          'filtered_manufacturing_region',
        ]),
      );
    });

    it('answers 422 for malformed JSON', async () => {
      const res = await t
        .http()
        .post('/api/v1/locations/reports')
        .set(ingest.auth)
        .set('Content-Type', 'application/json')
        .send('{"reports": [')
        .expect(422);
      expect(res.body.detail).toMatch(/^Validation failed/);
    });
  });

  describe('aggregation rules', () => {
    it('a tracker with one report shows that report in its hourly and daily bucket', async () => {
      const id = await newTracker();
      const res = await postReports(t, ingest, [
        report(id, '2026-03-04T10:15:30.250Z', { latitude: 48.85, longitude: 2.35, confidence: 2 }),
      ]).expect(200);
      expect(res.body).toEqual({ ...EMPTY_RESULT, accepted: 1, aggregated: 1 });
      const [raw] = await rawReports(t.db, [id]);
      const expected = {
        tracker_id: id,
        report_id: raw.id,
        reported_at: '2026-03-04T10:15:30.250Z',
        latitude: 48.85,
        longitude: 2.35,
        confidence: 2,
      };
      expect(await hourly(id)).toEqual([{ ...expected, bucket: '2026-03-04T10:00:00.000Z' }]);
      expect(await daily(id)).toEqual([{ ...expected, bucket: '2026-03-04T00:00:00.000Z', hourly_buckets: 1 }]);
      const history = await t
        .http()
        .get(`/api/v1/trackers/${id}/location-history?granularity=hourly`)
        .set(admin.auth)
        .expect(200);
      expect(history.body.items).toEqual([
        {
          timestamp: '2026-03-04T10:00:00.000Z',
          latitude: 48.85,
          longitude: 2.35,
          confidence: 2,
          reported_at: '2026-03-04T10:15:30.250Z',
          granularity: 'hourly',
        },
      ]);
    });

    it('several reports in one bucket: the latest by report time wins, not the last to arrive', async () => {
      const id = await newTracker();
      // One batch, newest first.
      await postReports(t, ingest, [
        report(id, '2026-03-04T10:50:00Z', { latitude: 3 }),
        report(id, '2026-03-04T10:10:00Z', { latitude: 1 }),
        report(id, '2026-03-04T10:30:00Z', { latitude: 2 }),
      ]).expect(200);
      expect((await hourly(id)).map((r) => [r.latitude, r.reported_at])).toEqual([[3, '2026-03-04T10:50:00.000Z']]);
      // A later batch with an older report for the same hour and day: stored, but does not overwrite.
      const late = await postReports(t, ingest, [report(id, '2026-03-04T10:45:00Z', { latitude: 9 })]).expect(200);
      expect(late.body).toEqual({ ...EMPTY_RESULT, accepted: 1, aggregated: 1 });
      expect((await hourly(id)).map((r) => r.latitude)).toEqual([3]);
      expect((await daily(id)).map((r) => r.latitude)).toEqual([3]);
      expect(await rawReports(t.db, [id])).toHaveLength(4);
      // A newer report overwrites.
      await postReports(t, ingest, [report(id, '2026-03-04T10:55:00Z', { latitude: 4 })]).expect(200);
      expect((await hourly(id)).map((r) => r.latitude)).toEqual([4]);
      expect((await daily(id)).map((r) => r.latitude)).toEqual([4]);
    });

    it('equal timestamps: the report stored later (greater id) wins', async () => {
      const id = await newTracker();
      await postReports(t, ingest, [report(id, '2026-03-04T10:00:00Z', { latitude: 10 })]).expect(200);
      await postReports(t, ingest, [report(id, '2026-03-04T10:00:00Z', { latitude: 5 })]).expect(200);
      expect((await hourly(id)).map((r) => r.latitude)).toEqual([5]);
    });

    it('the daily bucket holds the latest report of the UTC day across its hours', async () => {
      const id = await newTracker();
      await postReports(t, ingest, [
        report(id, '2026-03-04T00:00:00Z', { latitude: 1 }),
        report(id, '2026-03-04T23:59:59.999Z', { latitude: 2 }),
        report(id, '2026-03-04T12:00:00Z', { latitude: 3 }),
        report(id, '2026-03-05T00:00:00Z', { latitude: 4 }),
        // Offsets are normalised: 2026-03-05T01:30+02:00 is 2026-03-04T23:30Z.
        report(id, '2026-03-05T01:30:00+02:00', { latitude: 5 }),
      ]).expect(200);
      expect((await daily(id)).map((r) => [r.bucket, r.latitude])).toEqual([
        ['2026-03-04T00:00:00.000Z', 2],
        ['2026-03-05T00:00:00.000Z', 4],
      ]);
      expect((await hourly(id)).map((r) => [r.bucket, r.latitude])).toEqual([
        ['2026-03-04T00:00:00.000Z', 1],
        ['2026-03-04T12:00:00.000Z', 3],
        ['2026-03-04T23:00:00.000Z', 2],
        ['2026-03-05T00:00:00.000Z', 4],
      ]);
    });

    it('confidence 1 is stored but not aggregated; confidence 2 is aggregated', async () => {
      const id = await newTracker();
      const low = await postReports(t, ingest, [
        report(id, '2026-03-04T10:30:00Z', { confidence: 1, latitude: 7 }),
      ]).expect(200);
      expect(low.body).toEqual({ ...EMPTY_RESULT, accepted: 1, filtered_low_confidence: 1 });
      expect(await hourly(id)).toEqual([]);
      expect(await daily(id)).toEqual([]);
      const raw = await rawReports(t.db, [id]);
      expect(raw).toMatchObject([{ confidence: 1, eligible: false }]);
      const ok = await postReports(t, ingest, [
        report(id, '2026-03-04T10:10:00Z', { confidence: 2, latitude: 8 }),
      ]).expect(200);
      expect(ok.body).toEqual({ ...EMPTY_RESULT, accepted: 1, aggregated: 1 });
      // The newer low-confidence report does not take the bucket.
      expect((await hourly(id)).map((r) => [r.latitude, r.confidence])).toEqual([[8, 2]]);
      const zero = await postReports(t, ingest, [report(id, '2026-03-04T10:40:00Z', { confidence: 0 })]).expect(200);
      expect(zero.body.filtered_low_confidence).toBe(1);
    });

    // Inside = on or within all four edges; each edge case keeps the other coordinate inside.
    const inside: [string, number, number][] = [
      ['west edge lon 73.6', 30, 73.6],
      ['east edge lon 134.8', 30, 134.8],
      ['south edge lat 18.2', 18.2, 100],
      ['north edge lat 53.5', 53.5, 100],
      ['south-west corner', 18.2, 73.6],
      ['north-east corner', 53.5, 134.8],
      ['centre', 35, 105],
    ];
    const outside: [string, number, number][] = [
      ['just west lon 73.5999', 30, 73.5999],
      ['just east lon 134.8001', 30, 134.8001],
      ['just south lat 18.1999', 18.1999, 100],
      ['just north lat 53.5001', 53.5001, 100],
    ];

    it.each(inside)(
      'excludes a report inside the manufacturing-region box (inclusive): %s',
      async (_name, latitude, longitude) => {
        const id = await newTracker();
        const res = await postReports(t, ingest, [report(id, '2026-03-04T10:00:00Z', { latitude, longitude })]).expect(
          200,
        );
        expect(res.body).toEqual({ ...EMPTY_RESULT, accepted: 1, filtered_manufacturing_region: 1 });
        expect(await hourly(id)).toEqual([]);
        expect(await daily(id)).toEqual([]);
        const history = await t.http().get(`/api/v1/trackers/${id}/location-history`).set(admin.auth).expect(200);
        expect(history.body).toEqual({ items: [], total: 0, page: 1, size: 50, pages: 0 });
      },
    );

    it.each(outside)('includes a report just outside the box: %s', async (_name, latitude, longitude) => {
      const id = await newTracker();
      const res = await postReports(t, ingest, [report(id, '2026-03-04T10:00:00Z', { latitude, longitude })]).expect(
        200,
      );
      expect(res.body).toEqual({ ...EMPTY_RESULT, accepted: 1, aggregated: 1 });
      expect((await hourly(id)).map((r) => [r.latitude, r.longitude])).toEqual([[latitude, longitude]]);
    });

    it('a newer in-box report never replaces the bucket; low confidence wins the count when both apply', async () => {
      const id = await newTracker();
      await postReports(t, ingest, [report(id, '2026-03-04T10:05:00Z', { latitude: 50, longitude: 10 })]).expect(200);
      const res = await postReports(t, ingest, [
        report(id, '2026-03-04T10:50:00Z', { latitude: 30, longitude: 100, confidence: 4 }),
        report(id, '2026-03-04T10:55:00Z', { latitude: 30, longitude: 100, confidence: 1 }),
      ]).expect(200);
      expect(res.body).toEqual({
        ...EMPTY_RESULT,
        accepted: 2,
        filtered_low_confidence: 1,
        filtered_manufacturing_region: 1,
      });
      expect((await hourly(id)).map((r) => [r.latitude, r.longitude])).toEqual([[50, 10]]);
      expect(await rawReports(t.db, [id])).toHaveLength(3);
    });

    it('a tracker with only ineligible reports has no history and no latest location', async () => {
      const id = await newTracker();
      await postReports(t, ingest, [
        report(id, '2026-03-04T10:00:00Z', { confidence: 1 }),
        report(id, '2026-03-04T11:00:00Z', { latitude: 40, longitude: 116.4 }),
      ]).expect(200);
      const history = await t
        .http()
        .get(`/api/v1/trackers/${id}/location-history?granularity=hourly`)
        .set(admin.auth)
        .expect(200);
      expect(history.body.total).toBe(0);
      const { LocationHistoryService } = await import('../../src/locations/location-history.service.js');
      const { AccessScope } = await import('../../src/common/auth/access-scope.js');
      const latest = await t.app.get(LocationHistoryService).latestLocations(AccessScope.admin(), [id]);
      expect(latest.has(id)).toBe(false);
    });
  });

  describe('duplicates and idempotency', () => {
    it('counts duplicates within a batch and re-sent ones; they change nothing', async () => {
      const id = await newTracker();
      const first = report(id, '2026-03-04T10:00:00Z', { confidence: 3, source: 'gps', accuracy_m: 5 });
      const res = await postReports(t, ingest, [
        first,
        { ...first, confidence: 4, source: 'second' },
        report(id, '2026-03-04T10:20:00Z'),
      ]).expect(200);
      expect(res.body).toEqual({ ...EMPTY_RESULT, accepted: 2, duplicates: 1, aggregated: 2 });
      const before = { raw: await rawReports(t.db, [id]), aggregates: await aggregateTables(t.db, [id]) };
      // The first occurrence is the one stored.
      expect(before.raw[0]).toMatchObject({ confidence: 3, source: 'gps', accuracy_m: 5 });
      // Re-sending the whole batch (a retry) changes nothing, even with other non-key values.
      const retry = await postReports(t, ingest, [
        { ...first, confidence: 9 },
        first,
        report(id, '2026-03-04T10:20:00Z'),
      ]).expect(200);
      expect(retry.body).toEqual({ ...EMPTY_RESULT, duplicates: 3 });
      expect({ raw: await rawReports(t.db, [id]), aggregates: await aggregateTables(t.db, [id]) }).toEqual(before);
    });

    it('the same time at another position is not a duplicate', async () => {
      const id = await newTracker();
      await postReports(t, ingest, [report(id, '2026-03-04T10:00:00Z')]).expect(200);
      const res = await postReports(t, ingest, [report(id, '2026-03-04T10:00:00Z', { latitude: 52.5201 })]).expect(200);
      expect(res.body).toMatchObject({ accepted: 1, duplicates: 0 });
      // 2026-03-04T10:00:00.000Z and the same instant with an offset are the same report.
      const again = await postReports(t, ingest, [
        report(id, '2026-03-04T11:00:00+01:00'),
        report(id, '2026-03-04T10:00:00'),
      ]).expect(200);
      expect(again.body).toMatchObject({ accepted: 0, duplicates: 2 });
    });
  });

  describe('per-item judgement', () => {
    it('rejects bad items with their index and a detail, and stores the rest', async () => {
      const id = await newTracker();
      const future = new Date(Date.now() + 6 * 60_000).toISOString();
      const nearFuture = new Date(Date.now() + 4 * 60_000).toISOString();
      const items: unknown[] = [
        report(id, '2026-03-04T10:00:00Z'), // 0 ok
        report(999_999, '2026-03-04T10:00:00Z'), // 1 unknown tracker
        report(id, future), // 2 more than 5 min ahead
        report(id, nearFuture, { latitude: 1 }), // 3 ok (within the skew allowance)
        report(id, '2026-02-30T10:00:00Z'), // 4 impossible date
        report(id, 'yesterday'), // 5
        report(id, '2026-03-04'), // 6 a date without a time
        report(id, '2026-03-04T10:00:00Z', { latitude: 90.1 }), // 7
        report(id, '2026-03-04T10:00:00Z', { longitude: -180.5 }), // 8
        report(id, '2026-03-04T10:00:00Z', { confidence: 1.5 }), // 9
        report(id, '2026-03-04T10:00:00Z', { confidence: -1 }), // 10
        report(id, '2026-03-04T10:00:00Z', { accuracy_m: -1 }), // 11
        report(id, '2026-03-04T10:00:00Z', { source: 'x'.repeat(65) }), // 12
        { ...report(id, '2026-03-04T10:00:00Z'), latitude: '52.5' }, // 13 strings are not numbers
        { ...report(id, '2026-03-04T10:00:00Z'), tracker_id: 0 }, // 14
        { ...report(id, '2026-03-04T10:00:00Z'), colour: 'red' }, // 15 unknown field
        null, // 16
        'report', // 17
        report(id, '2026-03-04T10:00:00Z', { latitude: 90, longitude: -180, accuracy_m: null, source: null }), // 18 ok (range ends)
        report(id, '1969-12-31T23:59:59Z'), // 19 before 1970
        { tracker_id: id }, // 20 several problems at once
      ];
      const res = await postReports(t, ingest, items).expect(200);
      expect(res.body).toEqual({
        accepted: 3,
        duplicates: 0,
        aggregated: 3,
        filtered_low_confidence: 0,
        filtered_manufacturing_region: 0,
        rejected: [
          { index: 1, detail: 'tracker_id: tracker not found' },
          { index: 2, detail: 'timestamp: must not be more than 5 minutes in the future' },
          { index: 4, detail: 'timestamp: must be an ISO 8601 date-time (year 1970 or later)' },
          { index: 5, detail: 'timestamp: must be an ISO 8601 date-time (year 1970 or later)' },
          { index: 6, detail: 'timestamp: must be an ISO 8601 date-time (year 1970 or later)' },
          { index: 7, detail: 'latitude: must be a number between -90 and 90' },
          { index: 8, detail: 'longitude: must be a number between -180 and 180' },
          { index: 9, detail: 'confidence: must be an integer >= 0' },
          { index: 10, detail: 'confidence: must be an integer >= 0' },
          { index: 11, detail: 'accuracy_m: must be a number >= 0' },
          { index: 12, detail: 'source: must be a string of at most 64 characters' },
          { index: 13, detail: 'latitude: must be a number between -90 and 90' },
          { index: 14, detail: 'tracker_id: must be a positive integer' },
          { index: 15, detail: 'colour: property should not exist' },
          { index: 16, detail: 'report: must be an object' },
          { index: 17, detail: 'report: must be an object' },
          { index: 19, detail: 'timestamp: must be an ISO 8601 date-time (year 1970 or later)' },
          {
            index: 20,
            detail:
              'timestamp: must be an ISO 8601 date-time (year 1970 or later); latitude: must be a number between -90 and 90; ' +
              'longitude: must be a number between -180 and 180; confidence: must be an integer >= 0',
          },
        ],
      });
      const raw = await rawReports(t.db, [id]);
      expect(raw.map((r) => [r.latitude, r.longitude, r.accuracy_m, r.source])).toEqual(
        expect.arrayContaining([
          [52.52, 13.405, null, null],
          [1, 13.405, null, null],
          [90, -180, null, null],
        ]),
      );
      expect(raw).toHaveLength(3);
    });

    it('a batch of only rejected items answers 200 with every index', async () => {
      const res = await postReports(t, ingest, [report(999_998, '2026-03-04T10:00:00Z'), { nope: true }]).expect(200);
      expect(res.body.accepted).toBe(0);
      expect(res.body.rejected.map((r: { index: number }) => r.index)).toEqual([0, 1]);
    });

    it('stores accuracy_m and source and the eligibility verdict', async () => {
      const id = await newTracker();
      await postReports(t, ingest, [
        report(id, '2026-03-04T10:00:00.123456Z', { accuracy_m: 12.5, source: 'gnss "a\\b"' }),
      ]).expect(200);
      expect(await rawReports(t.db, [id])).toMatchObject([
        {
          timestamp: '2026-03-04T10:00:00.123Z',
          accuracy_m: 12.5,
          source: 'gnss "a\\b"',
          eligible: true,
          confidence: 3,
        },
      ]);
    });
  });

  describe('POST /trackers/{id}/locations', () => {
    it('takes a single report object or {reports:[...]} without tracker_id', async () => {
      const id = await newTracker();
      const single = await t
        .http()
        .post(`/api/v1/trackers/${id}/locations`)
        .set(ingest.auth)
        .send({ timestamp: '2026-03-04T10:00:00Z', latitude: 1, longitude: 2, confidence: 2 })
        .expect(200);
      expect(single.body).toEqual({ ...EMPTY_RESULT, accepted: 1, aggregated: 1 });
      const batch = await t
        .http()
        .post(`/api/v1/trackers/${id}/locations`)
        .set(ingest.auth)
        .send({
          reports: [
            { timestamp: '2026-03-04T10:30:00Z', latitude: 3, longitude: 4, confidence: 3 },
            { tracker_id: id, timestamp: '2026-03-04T10:40:00Z', latitude: 5, longitude: 6, confidence: 3 },
            { tracker_id: id + 1000, timestamp: '2026-03-04T10:50:00Z', latitude: 5, longitude: 6, confidence: 3 },
            { timestamp: '2026-03-04T11:00:00Z', latitude: 95, longitude: 6, confidence: 3 },
          ],
        })
        .expect(200);
      expect(batch.body).toEqual({
        ...EMPTY_RESULT,
        accepted: 2,
        aggregated: 2,
        rejected: [
          { index: 2, detail: 'tracker_id: must be omitted or equal the tracker in the path' },
          { index: 3, detail: 'latitude: must be a number between -90 and 90' },
        ],
      });
      expect((await hourly(id)).map((r) => r.latitude)).toEqual([5]);
    });

    it('rejects a bad single report as index 0', async () => {
      const id = await newTracker();
      const res = await t
        .http()
        .post(`/api/v1/trackers/${id}/locations`)
        .set(ingest.auth)
        .send({ timestamp: 'now', latitude: 1, longitude: 2, confidence: 2 })
        .expect(200);
      expect(res.body.rejected).toEqual([
        { index: 0, detail: 'timestamp: must be an ISO 8601 date-time (year 1970 or later)' },
      ]);
    });

    it('answers 404 for an unknown tracker and 422 for a bad id or body', async () => {
      const body = { timestamp: '2026-03-04T10:00:00Z', latitude: 1, longitude: 2, confidence: 2 };
      const missing = await t.http().post('/api/v1/trackers/999999/locations').set(ingest.auth).send(body).expect(404);
      expect(missing.body).toEqual({ detail: 'Tracker not found' });
      await t.http().post('/api/v1/trackers/abc/locations').set(ingest.auth).send(body).expect(422);
      await t.http().post('/api/v1/trackers/0/locations').set(ingest.auth).send(body).expect(422);
      const id = await newTracker();
      await t.http().post(`/api/v1/trackers/${id}/locations`).set(ingest.auth).send({ reports: [] }).expect(422);
      await t.http().post(`/api/v1/trackers/${id}/locations`).set(ingest.auth).send({ reports: 'x' }).expect(422);
    });
  });

  describe('concurrency', () => {
    it('parallel batches for the same buckets end with the same winner as a serial run', async () => {
      const trackers = [await newTracker(), await newTracker()];
      // 8 batches × 50 reports spread over the same two hours of both trackers, in shuffled order.
      const all = trackers.flatMap((id) =>
        Array.from({ length: 200 }, (_, i) =>
          report(id, new Date(Date.UTC(2026, 2, 4, 10, 0, 0) + i * 36_000).toISOString(), { latitude: 40 + i / 1000 }),
        ),
      );
      const shuffled = [...all].sort(() => Math.random() - 0.5);
      const batches = Array.from({ length: 8 }, (_, b) => shuffled.slice(b * 50, b * 50 + 50));
      const results = await Promise.all(batches.map((batch) => postReports(t, ingest, batch)));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(results.reduce((sum, r) => sum + r.body.accepted, 0)).toBe(400);
      const got = await aggregateTables(t.db, trackers);
      for (const id of trackers) {
        // Reports at 10:00:00 + i*36 s: i=99 is the last of hour 10, i=199 the last of hour 11 and of the day.
        expect(got.hourly.filter((r) => r.tracker_id === id).map((r) => [r.bucket, r.latitude])).toEqual([
          ['2026-03-04T10:00:00.000Z', 40.099],
          ['2026-03-04T11:00:00.000Z', 40.199],
        ]);
        expect(got.daily.filter((r) => r.tracker_id === id).map((r) => r.latitude)).toEqual([40.199]);
      }
      // Retries of all batches in parallel: all duplicates, nothing changes.
      const retries = await Promise.all(batches.map((batch) => postReports(t, ingest, [...batch].reverse())));
      expect(retries.reduce((sum, r) => sum + r.body.duplicates, 0)).toBe(400);
      expect(await aggregateTables(t.db, trackers)).toEqual(got);
    });
  });
});
