import { AccessScope } from '../../src/common/auth/access-scope.js';
import { LocationHistoryService } from '../../src/locations/location-history.service.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { postReports, report } from '../support/locations.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('Locations: GET /trackers/{id}/location-history', () => {
  let t: TestApp;
  let ingest: CreatedUser;
  let admin: CreatedUser;
  let user: CreatedUser;
  let visible: number;
  let hidden: number;
  let fixed: number;
  let cutoff: number;
  let clientAId: number;

  const history = (id: number, query = '', as: CreatedUser = admin) =>
    t.http().get(`/api/v1/trackers/${id}/location-history${query}`).set(as.auth);
  const iso = (ms: number) => new Date(ms).toISOString();

  beforeAll(async () => {
    // Hourly points are served for the last two days (from the start of today UTC minus 2 days).
    ({ t, user: ingest } = await createTestAppWithUser('ingest', { env: { HOURLY_HISTORY_DAYS: '2' } }));
    admin = await t.factories.admin();
    const clientA = await t.factories.client();
    const clientB = await t.factories.client();
    clientAId = clientA.id;
    user = await t.factories.user({ clients: [clientA.id] });
    visible = (await t.factories.tracker({ runId: (await t.factories.run({ clientId: clientA.id })).id })).id;
    hidden = (await t.factories.tracker({ runId: (await t.factories.run({ clientId: clientB.id })).id })).id;
    fixed = (await t.factories.tracker({ runId: (await t.factories.run({ clientId: clientA.id })).id })).id;

    const now = Date.now();
    cutoff = Math.floor(now / DAY) * DAY - 2 * DAY;
    await postReports(t, ingest, [
      report(visible, iso(cutoff + HOUR + 10 * 60_000), { latitude: 1 }), // hourly, inside the window
      report(visible, iso(cutoff), { latitude: 2 }), // exactly at the cutoff: hourly bucket = cutoff
      report(visible, iso(cutoff - 1), { latitude: 3 }), // 1 ms before: only its daily bucket shows
      report(visible, iso(cutoff - 3 * DAY + 5 * HOUR), { latitude: 4 }), // older day, daily
      report(visible, iso(cutoff - 3 * DAY + 2 * HOUR), { latitude: 5 }), // same day, earlier: loses
      report(hidden, iso(cutoff + HOUR), { latitude: 6 }),
      // Fixed data set for filters and paging: 2026-01-05 10:00..14:00 and 2026-01-06 09:00.
      ...[10, 11, 12, 13, 14].map((h) => report(fixed, `2026-01-05T${h}:30:00Z`, { latitude: h })),
      report(fixed, '2026-01-06T09:15:00Z', { latitude: 9 }),
    ]).expect(200);
  });
  afterAll(() => t.close());

  describe('combined view (granularity=auto, the default)', () => {
    it('serves hourly points from the cutoff on and daily points before it, newest first', async () => {
      const res = await history(visible).expect(200);
      expect(res.body).toEqual({
        items: [
          {
            timestamp: iso(cutoff + HOUR),
            latitude: 1,
            longitude: 13.405,
            confidence: 3,
            reported_at: iso(cutoff + HOUR + 10 * 60_000),
            granularity: 'hourly',
          },
          {
            timestamp: iso(cutoff),
            latitude: 2,
            longitude: 13.405,
            confidence: 3,
            reported_at: iso(cutoff),
            granularity: 'hourly',
          },
          {
            timestamp: iso(cutoff - DAY),
            latitude: 3,
            longitude: 13.405,
            confidence: 3,
            reported_at: iso(cutoff - 1),
            granularity: 'daily',
          },
          {
            timestamp: iso(cutoff - 3 * DAY),
            latitude: 4,
            longitude: 13.405,
            confidence: 3,
            reported_at: iso(cutoff - 3 * DAY + 5 * HOUR),
            granularity: 'daily',
          },
        ],
        total: 4,
        page: 1,
        size: 50,
        pages: 1,
      });
    });

    it('granularity=hourly and =daily read one table each', async () => {
      const hourly = await history(visible, '?granularity=hourly').expect(200);
      expect(
        hourly.body.items.map((p: { timestamp: string; latitude: number; granularity: string }) => [
          p.timestamp,
          p.latitude,
          p.granularity,
        ]),
      ).toEqual([
        [iso(cutoff + HOUR), 1, 'hourly'],
        [iso(cutoff), 2, 'hourly'],
        [iso(cutoff - HOUR), 3, 'hourly'],
        [iso(cutoff - 3 * DAY + 5 * HOUR), 4, 'hourly'],
        [iso(cutoff - 3 * DAY + 2 * HOUR), 5, 'hourly'],
      ]);
      const daily = await history(visible, '?granularity=daily').expect(200);
      expect(
        daily.body.items.map((p: { timestamp: string; latitude: number; granularity: string }) => [
          p.timestamp,
          p.latitude,
          p.granularity,
        ]),
      ).toEqual([
        [iso(cutoff), 1, 'daily'],
        [iso(cutoff - DAY), 3, 'daily'],
        [iso(cutoff - 3 * DAY), 4, 'daily'],
      ]);
    });

    it('order=asc reverses the order', async () => {
      const res = await history(visible, '?order=asc').expect(200);
      expect(res.body.items.map((p: { latitude: number }) => p.latitude)).toEqual([4, 3, 2, 1]);
    });
  });

  describe('filters and pagination', () => {
    const lat = (body: { items: { latitude: number }[] }) => body.items.map((p) => p.latitude);

    it('start_date and end_date are inclusive bounds on the bucket start', async () => {
      expect(
        lat(
          (
            await history(
              fixed,
              '?granularity=hourly&start_date=2026-01-05T11:00:00Z&end_date=2026-01-05T13:00:00Z',
            ).expect(200)
          ).body,
        ),
      ).toEqual([13, 12, 11]);
      expect(
        lat(
          (
            await history(
              fixed,
              '?granularity=hourly&start_date=2026-01-05T11:00:00.001Z&end_date=2026-01-05T12:59:59Z',
            ).expect(200)
          ).body,
        ),
      ).toEqual([12]);
      // Without an offset a time is UTC; with one it is converted.
      expect(
        lat((await history(fixed, '?granularity=hourly&start_date=2026-01-05T14:00:00&order=asc').expect(200)).body),
      ).toEqual([14, 9]);
      expect(
        lat((await history(fixed, '?granularity=hourly&end_date=2026-01-05T12:00:00%2B01:00').expect(200)).body),
      ).toEqual([11, 10]);
      // A bare date is its midnight UTC: the day's daily bucket starts exactly there.
      expect(
        lat((await history(fixed, '?granularity=daily&start_date=2026-01-05&end_date=2026-01-05').expect(200)).body),
      ).toEqual([14]);
      expect(
        lat((await history(fixed, '?granularity=hourly&start_date=2026-01-05&end_date=2026-01-05').expect(200)).body),
      ).toEqual([]);
      const one = await history(
        fixed,
        '?granularity=hourly&start_date=2026-01-05T12:00:00Z&end_date=2026-01-05T12:00:00Z',
      ).expect(200);
      expect(one.body).toMatchObject({ total: 1, pages: 1 });
    });

    it('pages with skip/limit and reports the total of the filtered history', async () => {
      const res = await history(fixed, '?granularity=hourly&skip=2&limit=2').expect(200);
      expect(res.body).toMatchObject({ total: 6, page: 2, size: 2, pages: 3 });
      expect(lat(res.body)).toEqual([13, 12]); // desc: 9, 14, 13, 12, 11, 10
      const asc = await history(fixed, '?granularity=hourly&skip=4&limit=2&order=asc').expect(200);
      expect(lat(asc.body)).toEqual([14, 9]);
      const beyond = await history(fixed, '?granularity=hourly&skip=10&limit=5').expect(200);
      expect(beyond.body).toEqual({ items: [], total: 6, page: 3, size: 5, pages: 2 });
      const filtered = await history(fixed, '?granularity=hourly&start_date=2026-01-05T12:00:00Z&limit=1').expect(200);
      expect(filtered.body).toMatchObject({ total: 4, pages: 4 }); // 12, 13, 14 and the next day 09
      expect(lat(filtered.body)).toEqual([9]);
    });

    it.each([
      ['?start_date=2026-01-06&end_date=2026-01-05', 'start_date', 'must not be after end_date'],
      ['?start_date=yesterday', 'start_date', 'must be an ISO 8601 date-time (year 1970 or later)'],
      ['?end_date=2026-13-01', 'end_date', 'must be an ISO 8601 date-time (year 1970 or later)'],
      ['?granularity=weekly', 'granularity', undefined],
      ['?order=up', 'order', undefined],
      ['?limit=0', 'limit', undefined],
      ['?limit=1001', 'limit', undefined],
      ['?skip=-1', 'skip', undefined],
      ['?color=red', 'color', undefined],
    ])('answers 422 for %s', async (query, field, message) => {
      const res = await history(fixed, query).expect(422);
      expect(res.body.detail).toMatch(/^Validation failed: /);
      expect(res.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining(message ? { field, message } : { field })]),
      );
    });
  });

  describe('exact totals and paging across the parts', () => {
    it('pages of the combined view run across the cutoff in both orders', async () => {
      const desc = await history(visible, '?skip=1&limit=2').expect(200);
      expect(desc.body).toMatchObject({ total: 4, page: 1, size: 2, pages: 2 });
      expect(
        desc.body.items.map((p: { latitude: number; granularity: string }) => [p.latitude, p.granularity]),
      ).toEqual([
        [2, 'hourly'],
        [3, 'daily'],
      ]);
      const asc = await history(visible, '?skip=1&limit=2&order=asc').expect(200);
      expect(asc.body.items.map((p: { latitude: number; granularity: string }) => [p.latitude, p.granularity])).toEqual(
        [
          [3, 'daily'],
          [2, 'hourly'],
        ],
      );
      const last = await history(visible, '?skip=3&limit=2').expect(200);
      expect(last.body.items.map((p: { latitude: number }) => p.latitude)).toEqual([4]);
    });

    it('total equals the number of points listed, for every granularity and any bounds (also inside a day)', async () => {
      // Around the cutoff (C): day C-2 hours 0, 5, 23; C-1 hours 3, 4; day C every hour; C+1 hours 1, 22.
      const id = (await t.factories.tracker()).id;
      const hours = [
        ...[0, 5, 23].map((h) => cutoff - 2 * DAY + h * HOUR),
        ...[3, 4].map((h) => cutoff - DAY + h * HOUR),
        ...Array.from({ length: 24 }, (_, h) => cutoff + h * HOUR),
        ...[1, 22].map((h) => cutoff + DAY + h * HOUR),
      ];
      await postReports(
        t,
        ingest,
        hours.map((ms, i) => report(id, iso(ms + 17 * 60_000), { latitude: i })),
      ).expect(200);
      const days = [...new Set(hours.map((ms) => Math.floor(ms / DAY) * DAY))];
      const expected: Record<string, number[]> = {
        hourly: hours,
        daily: days,
        auto: [...days.filter((ms) => ms < cutoff), ...hours.filter((ms) => ms >= cutoff)],
      };
      const bounds = [
        undefined,
        ...[
          -3 * DAY,
          -2 * DAY,
          -2 * DAY + 5 * HOUR,
          -2 * DAY + 5 * HOUR + 1,
          -DAY - 1000,
          -DAY + 3 * HOUR,
          -1,
          0,
          11.5 * HOUR,
          23 * HOUR,
          DAY,
          DAY + 21 * HOUR,
          2 * DAY,
        ].map((offset) => iso(cutoff + offset)),
      ];
      let checked = 0;
      for (const granularity of ['hourly', 'daily', 'auto']) {
        for (const start of bounds) {
          for (const end of bounds) {
            if (start && end && Date.parse(start) > Date.parse(end)) continue;
            const query = [
              `granularity=${granularity}`,
              'limit=1000',
              start && `start_date=${start}`,
              end && `end_date=${end}`,
            ]
              .filter(Boolean)
              .join('&');
            const res = await history(id, `?${query}`).expect(200);
            const inRange = (ms: number) => (!start || ms >= Date.parse(start)) && (!end || ms <= Date.parse(end));
            const buckets = expected[granularity];
            expect({ query, total: res.body.total, listed: res.body.items.length }).toEqual({
              query,
              total: buckets.filter(inRange).length,
              listed: buckets.filter(inRange).length,
            });
            checked++;
          }
        }
      }
      expect(checked).toBeGreaterThan(200);
    });

    it('each daily row counts its hourly rows through concurrent batches, deletes and rebuilds', async () => {
      const id = (await t.factories.tracker()).id;
      const hourCount = async () =>
        t.db.query<{ bucket: Date; hourly_buckets: number }[]>(
          `SELECT bucket, hourly_buckets FROM location_history_daily WHERE tracker_id = $1 ORDER BY bucket`,
          [id],
        );
      // 24 single-report batches in parallel, one per hour of the same day (a new day: its daily row
      // is created by one batch and locked by the others), then again with newer reports.
      for (const minute of [10, 20]) {
        const results = await Promise.all(
          Array.from({ length: 24 }, (_, h) =>
            postReports(t, ingest, [report(id, iso(Date.UTC(2026, 2, 1, h, minute)), { latitude: h })]),
          ),
        );
        expect(results.map((r) => r.status)).toEqual(Array(24).fill(200));
        expect(await hourCount()).toEqual([{ bucket: new Date(Date.UTC(2026, 2, 1)), hourly_buckets: 24 }]);
      }
      expect((await history(id, '?granularity=hourly&limit=1').expect(200)).body.total).toBe(24);
      // Any writer of hourly rows keeps the count (statement triggers), here a plain DELETE.
      await t.db.query(`DELETE FROM location_history_hourly WHERE tracker_id = $1 AND bucket >= $2`, [
        id,
        iso(Date.UTC(2026, 2, 1, 20)),
      ]);
      expect(await hourCount()).toEqual([{ bucket: new Date(Date.UTC(2026, 2, 1)), hourly_buckets: 20 }]);
      expect((await history(id, '?granularity=hourly&start_date=2026-03-01T10:00:00Z').expect(200)).body.total).toBe(
        10,
      );
    });
  });

  describe('access', () => {
    it('scopes a user to the trackers of their clients; an invisible tracker is 404 like a missing one', async () => {
      const own = await history(visible, '', user).expect(200);
      expect(own.body.total).toBe(4);
      const invisible = await history(hidden, '', user).expect(404);
      const missing = await history(999_999, '', user).expect(404);
      expect(invisible.body).toEqual({ detail: 'Tracker not found' });
      expect(missing.body).toEqual(invisible.body);
      expect((await history(hidden).expect(200)).body.total).toBe(1);
    });

    it('refuses the ingest role (403) and anonymous callers (401); a bad id is 422', async () => {
      await history(visible, '', ingest).expect(403);
      await t.http().get(`/api/v1/trackers/${visible}/location-history`).expect(401);
      await history(0 as number).expect(422);
      await t.http().get('/api/v1/trackers/x1/location-history').set(admin.auth).expect(422);
    });

    it('a tracker without reports has an empty history', async () => {
      const empty = await t.factories.tracker();
      expect((await history(empty.id).expect(200)).body).toEqual({ items: [], total: 0, page: 1, size: 50, pages: 0 });
    });
  });

  describe('latestLocations (used for latest_location)', () => {
    it('gives the eligible report with the greatest time as an hourly LocationPoint, scoped', async () => {
      const service = t.app.get(LocationHistoryService);
      const all = await service.latestLocations(AccessScope.admin(), [visible, hidden, fixed, 999_999]);
      expect(all.get(visible)).toEqual({
        timestamp: iso(cutoff + HOUR),
        latitude: 1,
        longitude: 13.405,
        confidence: 3,
        reported_at: iso(cutoff + HOUR + 10 * 60_000),
        granularity: 'hourly',
      });
      expect(all.get(fixed)).toMatchObject({ latitude: 9, timestamp: '2026-01-06T09:00:00.000Z' });
      expect(all.get(hidden)).toMatchObject({ latitude: 6 });
      expect(all.has(999_999)).toBe(false);
      const scoped = await service.latestLocations(AccessScope.clients([clientAId]), [visible, hidden]);
      expect([...scoped.keys()]).toEqual([visible]);
      expect((await service.latestLocations(AccessScope.clients([]), [visible, hidden])).size).toBe(0);
    });
  });
});
