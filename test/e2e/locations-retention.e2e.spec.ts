import {
  MaintenanceService,
  PARTITION_AHEAD_DAYS,
  SPLIT_MIN_ROWS,
  type MaintenanceRun,
} from '../../src/maintenance/maintenance.service.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { postReports, report } from '../support/locations.js';

const DAY_MS = 86_400_000;

/**
 * Raw-report retention by partition (RAW_RETENTION_DAYS=30) on back-dated data: reports are ingested
 * through the API into daily partitions of past days, then their receipt times are moved back.
 * What must go is exactly what was received more than 30 days ago, wherever it sits.
 */
describe('Locations: retention drops whole daily partitions, deletes row by row elsewhere', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let device: CreatedUser;
  let trackerId: number;
  let today: number;

  const partition = (dayMs: number) =>
    `location_reports_p${new Date(dayMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
  const exists = async (name: string) =>
    (await t.db.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [name]))[0].e as boolean;
  const ids = async (where: string) =>
    (await t.db.query<{ id: string }[]>(`SELECT id::text AS id FROM location_reports WHERE ${where} ORDER BY id`)).map(
      (r) => r.id,
    );
  /** Reports of one UTC day, `count` of them a minute apart from 10:00 (latitude tells the groups apart). */
  const dayReports = (dayMs: number, count: number, latitude: number) =>
    Array.from({ length: count }, (_, i) =>
      report(trackerId, new Date(dayMs + 10 * 3_600_000 + i * 60_000).toISOString(), { latitude }),
    );
  const ingest = async (reports: ReturnType<typeof report>[]) => {
    const res = await postReports(t, device, reports);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: reports.length });
  };
  const history = async (granularity: string) =>
    (
      await t
        .http()
        .get(`/api/v1/trackers/${trackerId}/location-history?granularity=${granularity}&limit=1000`)
        .set(admin.auth)
        .expect(200)
    ).body;

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin', { env: { RAW_RETENTION_DAYS: '30' } }));
    device = await t.factories.ingest();
    trackerId = (await t.factories.tracker()).id;
    const [{ ms }] = await t.db.query(
      `SELECT (extract(epoch FROM date_trunc('day', now(), 'UTC')) * 1000)::bigint::text AS ms`,
    );
    today = Number(ms);
    // Today's partitions, whenever the cloned template was made (the job keeps them in production).
    await t.db.query(
      `SELECT location_reports_add_partition(d::date)
         FROM generate_series(((now() AT TIME ZONE 'UTC')::date - 1)::timestamp, ((now() AT TIME ZONE 'UTC')::date + $1::int)::timestamp, interval '1 day') d`,
      [PARTITION_AHEAD_DAYS],
    );
  });
  afterAll(() => t.close());

  it('drops an old day whole, trims a day with late arrivals and the default partition to the exact rows, keeps aggregates', async () => {
    const dayA = today - 40 * DAY_MS; // everything received 40 days ago: dropped whole
    const dayB = today - 35 * DAY_MS; // received 35 days ago, plus late arrivals received an hour ago
    const dayC = today - 20 * DAY_MS; // received 20 days ago: within retention
    for (const day of [dayA, dayB, dayC]) {
      await t.db.query(`SELECT location_reports_add_partition($1::date)`, [new Date(day).toISOString().slice(0, 10)]);
    }
    const farPast = Date.UTC(2020, 2, 1);
    await ingest([
      ...dayReports(dayA, 30, 50.1),
      ...dayReports(dayB, 25, 50.2),
      ...dayReports(dayC, 10, 50.3),
      ...dayReports(farPast, 12, 50.4),
    ]);
    await ingest([...dayReports(dayB + 2 * 3_600_000, 5, 50.5), ...dayReports(farPast + 2 * 3_600_000, 4, 50.6)]);
    await ingest(
      Array.from({ length: 6 }, (_, i) =>
        report(trackerId, new Date(Date.now() - (i + 1) * 600_000).toISOString(), { latitude: 50.7 }),
      ),
    );
    // Back-date the receipt: a report received a minute after it was taken (late ones stay recent).
    await t.db.query(
      `UPDATE location_reports SET received_at = timestamp + interval '1 minute' WHERE latitude IN (50.1, 50.2, 50.3, 50.4)`,
    );
    await t.db.query(`UPDATE location_reports SET received_at = now() - interval '40 days' WHERE latitude = 50.4`);
    expect(
      await t.db.query(
        `SELECT tableoid::regclass::text AS p, count(*)::int AS n FROM location_reports GROUP BY 1 ORDER BY 1`,
      ),
    ).toEqual(
      expect.arrayContaining([
        { p: 'location_reports_default', n: 16 },
        { p: partition(dayA), n: 30 },
        { p: partition(dayB), n: 30 },
        { p: partition(dayC), n: 10 },
      ]),
    );
    const kept = await ids(`received_at >= now() - interval '30 days'`);
    const hourly = await history('hourly');
    const daily = await history('daily');
    expect(hourly.total).toBeGreaterThan(0);

    const result = (await t.app.get(MaintenanceService).runOnce({ batchSize: 20 })) as Extract<
      MaintenanceRun,
      { ran: true }
    >;

    // Row by row: 25 of day B (two batches: 20 + 5) and 12 of the default partition (one batch).
    expect(result).toMatchObject({ ran: true, partitionsDropped: 1, reportsDeleted: 25 + 12, batches: 3 });
    expect(await exists(partition(dayA))).toBe(false);
    expect(await exists(partition(dayB))).toBe(true);
    expect(await exists(partition(dayC))).toBe(true);
    expect(await ids('true')).toEqual(kept);
    expect(kept).toHaveLength(5 + 10 + 4 + 6);
    // The aggregates are separate rows: the history reads exactly as before.
    expect(await history('hourly')).toEqual(hourly);
    expect(await history('daily')).toEqual(daily);
    // A late report for the dropped day lands in the default partition.
    await ingest(dayReports(dayA + 3_600_000, 1, 50.8));
    expect(
      await t.db.query(`SELECT tableoid::regclass::text AS p FROM location_reports WHERE latitude = 50.8`),
    ).toEqual([{ p: 'location_reports_default' }]);
  });

  it("keeps partitions ahead, moving a day's reports out of the default partition, and splits a crowded day", async () => {
    const lastAhead = today + PARTITION_AHEAD_DAYS * DAY_MS;
    await t.db.query(`DROP TABLE IF EXISTS ${partition(lastAhead)}`);
    // Reports far in the future only come from outside the API (which refuses them); 3 land in the default partition.
    await t.db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
       SELECT $1, to_timestamp($2::bigint / 1000.0) + g * interval '1 hour', 50.9, 13.4, 3, true FROM generate_series(1, 3) g`,
      [trackerId, lastAhead],
    );
    // A crowded past day in the default partition, received now.
    const crowded = Date.UTC(2021, 5, 1);
    await t.db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
       SELECT $1, to_timestamp($2::bigint / 1000.0) + g * interval '1 second', 51.0, 13.4, 3, true FROM generate_series(1, $3::int) g`,
      [trackerId, crowded, SPLIT_MIN_ROWS],
    );
    const before = await ids('true');

    const result = await t.app.get(MaintenanceService).runOnce();

    expect(result).toMatchObject({ ran: true, partitionsCreated: 2, partitionsDropped: 0, reportsDeleted: 0 });
    expect(await ids('true')).toEqual(before);
    const placed = await t.db.query(
      `SELECT tableoid::regclass::text AS p, count(*)::int AS n FROM location_reports WHERE latitude IN (50.9, 51.0) GROUP BY 1 ORDER BY 1`,
    );
    expect(placed).toEqual(
      [
        { p: partition(crowded), n: SPLIT_MIN_ROWS },
        { p: partition(lastAhead), n: 3 },
      ].sort((a, b) => a.p.localeCompare(b.p)),
    );
    for (let day = today - DAY_MS; day <= lastAhead; day += DAY_MS) expect(await exists(partition(day))).toBe(true);
    // A second run has nothing left to do.
    expect(await t.app.get(MaintenanceService).runOnce()).toMatchObject({
      ran: true,
      partitionsCreated: 0,
      partitionsDropped: 0,
      reportsDeleted: 0,
    });
  });
});
