import type { TestApp } from '../support/app.js';
import { postReports, rawReports, report } from '../support/locations.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Every date input goes through one strict ISO 8601 reading with one rule and one message:
 * a real calendar date and time (no Feb 30, hour 24 or minute 60 rolled over into the next
 * day or hour) in the years 1970..9999.
 */
const MESSAGE = 'must be an ISO 8601 date-time (year 1970 or later)';
const IMPOSSIBLE = [
  '2026-02-30T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2025-02-29T12:00:00Z',
  '2026-03-01T24:00:00Z',
  '2026-03-01T10:60:00Z',
  '2026-03-01T10:00:60Z',
  '2026-03-01T10:00:00+24:00',
  '1969-12-31T23:59:59Z',
  '1965-06-01',
  '1970-01-01T00:30:00+01:00',
  '9999-12-31T23:00:00-05:00',
  '10000-01-01T00:00:00Z',
  ' 2026-03-01T10:00:00Z',
  '2026-03-01T10:00:00Z ',
];

describe('Strict input dates', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let tracker: { id: number };

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
    tracker = await t.factories.tracker({ runId: w.runA.id, createdAt: '2026-01-01T00:00:00Z' });
  });
  afterAll(() => t.close());

  const expect422 = (res: { status: number; body: unknown }, field: string) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 422,
      body: { detail: `Validation failed: ${field}: ${MESSAGE}`, errors: [{ field, message: MESSAGE }] },
    });
  };
  const runCount = async () => Number((await t.db.query('SELECT count(*) AS n FROM production_runs'))[0].n);

  describe.each(IMPOSSIBLE)('%j', (value) => {
    it('is refused as a production run date (create and update) and nothing is stored', async () => {
      const before = await runCount();
      for (const field of ['start_date', 'end_date']) {
        expect422(
          await t
            .http()
            .post('/api/v1/production-runs')
            .set(w.admin.auth)
            .send({ brand_id: w.runA.brand_id, [field]: value }),
          field,
        );
        expect422(
          await t
            .http()
            .put(`/api/v1/production-runs/${w.runA.id}`)
            .set(w.admin.auth)
            .send({ [field]: value }),
          field,
        );
      }
      expect(await runCount()).toBe(before);
      const [row] = await t.db.query('SELECT start_date, end_date FROM production_runs WHERE id = $1', [w.runA.id]);
      expect(row).toEqual({ start_date: new Date('2026-01-01T00:00:00Z'), end_date: null });
    });

    it('is refused as a status entry timestamp and as a new tracker status_timestamp', async () => {
      expect422(
        await t
          .http()
          .post(`${TRACKERS}/${tracker.id}/status`)
          .set(w.admin.auth)
          .send({ status: 'IN_TRANSIT', timestamp: value }),
        'timestamp',
      );
      expect422(
        await t
          .http()
          .post(TRACKERS)
          .set(w.admin.auth)
          .send({ name: 'dated', production_run_id: w.runA.id, status_timestamp: value }),
        'status_timestamp',
      );
      const [row] = await t.db.query('SELECT count(*)::int AS n FROM tracker_status_history WHERE tracker_id = $1', [
        tracker.id,
      ]);
      expect(row.n).toBe(1);
    });

    it('is refused as analytics as_of and as a location-history bound', async () => {
      const asOf = await t
        .http()
        .get(`/api/v1/production-runs/${w.runA.id}/analytics/summary`)
        .query({ as_of: value })
        .set(w.admin.auth);
      expect422(asOf, 'as_of');
      for (const field of ['start_date', 'end_date']) {
        expect422(
          await t
            .http()
            .get(`${TRACKERS}/${tracker.id}/location-history`)
            .query({ [field]: value })
            .set(w.admin.auth),
          field,
        );
      }
    });

    it('rejects a location report with the same message, alone in its batch', async () => {
      const res = await postReports(t, w.ingest, [
        report(tracker.id, value),
        report(tracker.id, `2026-01-02T00:${String(IMPOSSIBLE.indexOf(value)).padStart(2, '0')}:00Z`),
      ]);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ accepted: 1, rejected: [{ index: 0, detail: `timestamp: ${MESSAGE}` }] });
    });
  });

  it('the bounds themselves are accepted: 1970-01-01 and leap days', async () => {
    const res = await t.http().post('/api/v1/production-runs').set(w.admin.auth).send({
      brand_id: w.runA.brand_id,
      start_date: '1970-01-01T00:00:00Z',
      end_date: '2024-02-29T23:59:59.999+00:00',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ start_date: '1970-01-01T00:00:00.000Z', end_date: '2024-02-29T23:59:59.999Z' });
    const offset = await t
      .http()
      .put(`/api/v1/production-runs/${res.body.id}`)
      .set(w.admin.auth)
      .send({ end_date: '2024-03-01T01:30:00+02:00' });
    expect(offset.status).toBe(200);
    expect(offset.body.end_date).toBe('2024-02-29T23:30:00.000Z');
    const status = await t
      .http()
      .post(`${TRACKERS}/${tracker.id}/status`)
      .set(w.admin.auth)
      .send({ status: 'IN_TRANSIT', timestamp: '1970-01-01T00:00:00Z' });
    expect(status.status).toBe(201);
    expect(status.body.timestamp).toBe('1970-01-01T00:00:00.000Z');
    const ingested = await postReports(t, w.ingest, [report(tracker.id, '1970-01-01T00:00:00Z')]);
    expect(ingested.body).toMatchObject({ accepted: 1, rejected: [] });
    expect((await rawReports(t.db, [tracker.id])).length).toBeGreaterThan(0);
  });
});
