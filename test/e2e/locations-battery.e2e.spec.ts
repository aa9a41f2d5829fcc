import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { postReports, report } from '../support/locations.js';

describe('Locations: the battery level of a report', () => {
  let t: TestApp;
  let ingest: CreatedUser;

  beforeAll(async () => {
    ({ t, user: ingest } = await createTestAppWithUser('ingest'));
  });
  afterAll(() => t.close());

  const stored = async (trackerId: number) =>
    (
      (await t.db.query(
        "SELECT to_char(timestamp AT TIME ZONE 'UTC', 'HH24:MI') AS at, battery FROM location_reports WHERE tracker_id = $1 ORDER BY timestamp",
        [trackerId],
      )) as { at: string; battery: number | null }[]
    ).map((r) => [r.at, r.battery]);

  it('is stored as reported: 0..100, null or absent', async () => {
    const id = (await t.factories.tracker()).id;
    const res = await postReports(t, ingest, [
      report(id, '2026-01-01T00:00:00Z', { battery: 0 } as object),
      report(id, '2026-01-01T00:01:00Z', { battery: 100 } as object),
      report(id, '2026-01-01T00:02:00Z', { battery: 57 } as object),
      report(id, '2026-01-01T00:03:00Z', { battery: null } as object),
      report(id, '2026-01-01T00:04:00Z'),
    ]).expect(200);
    expect(res.body).toMatchObject({ accepted: 5, rejected: [] });
    expect(await stored(id)).toEqual([
      ['00:00', 0],
      ['00:01', 100],
      ['00:02', 57],
      ['00:03', null],
      ['00:04', null],
    ]);
  });

  it('rejects a report whose battery is not an integer 0..100, and the batch goes on', async () => {
    const id = (await t.factories.tracker()).id;
    const bad = [101, -1, 50.5, '50', true, {}];
    const res = await postReports(t, ingest, [
      ...bad.map((battery, i) => report(id, `2026-01-01T01:0${i}:00Z`, { battery } as object)),
      report(id, '2026-01-01T02:00:00Z', { battery: 12 } as object),
    ]).expect(200);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected).toEqual(
      bad.map((_, index) => ({ index, detail: 'battery: must be an integer between 0 and 100' })),
    );
    expect(await stored(id)).toEqual([['02:00', 12]]);
  });

  it('is taken on the tracker route as well', async () => {
    const id = (await t.factories.tracker()).id;
    await t
      .http()
      .post(`/api/v1/trackers/${id}/locations`)
      .set(ingest.auth)
      .send({ timestamp: '2026-01-01T03:00:00Z', latitude: 1, longitude: 1, confidence: 2, battery: 9 })
      .expect(200);
    expect(await stored(id)).toEqual([['03:00', 9]]);
  });
});
