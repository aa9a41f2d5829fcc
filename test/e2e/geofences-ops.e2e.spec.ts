import { jest } from '@jest/globals';
import { parseArgs } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { GEOFENCE_BACKLOG_SCAN } from '../../src/geofences/geofences.health.js';
import { GEOFENCE_ON, type TestApp } from '../support/app.js';
import { at, createPlace, north, ORIGIN, settled } from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { eventually } from '../support/mail.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/** Operating geofence automation: the rebuild command, the pipeline health step, the metrics. */
describe('geofences: operations', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number };
  const command = COMMANDS.find((c) => c.name === 'geofences:rebuild')!;
  const run = async (argv: string[]): Promise<string> => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await command.run(t.app, parseArgs(argv));
      return log.mock.calls.map((args) => args.join(' ')).join('\n');
    } finally {
      log.mockRestore();
      stderr.mockRestore();
    }
  };

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: GEOFENCE_ON }));
    S = await createPlace(t, w.admin.auth, 'storage', { ...ORIGIN, radius_m: 300, dwell_minutes: 0 });
  });
  afterAll(() => t.close());

  it('a location change affects later processing only; geofences:rebuild recomputes with the locations as they are', async () => {
    expect(command.usage).toMatch(/^geofences:rebuild \[--tracker ID\]/);
    const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    const other = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    for (const id of [trk.id, other.id])
      expect((await postReports(t, w.ingest, [report(id, at(1), north(500))])).status).toBe(200);
    await settled(t);
    const visits = async (id: number) =>
      (await t.http().get(`${TRACKERS}/${id}/visits`).set(w.userA.auth).expect(200)).body.total;
    expect(await visits(trk.id)).toBe(0);
    // Radius 300 → 600: the report 500 m away is inside now, but only for replays from here on.
    await t.http().put(`/api/v1/storage-locations/${S.id}`).set(w.admin.auth).send({ radius_m: 600 }).expect(200);
    expect(await visits(trk.id)).toBe(0);

    expect(await run(['--tracker', String(trk.id)])).toMatch(/^Replayed geofences of 1 tracker\(s\) in \d+\.\d s\.$/);
    expect(await visits(trk.id)).toBe(1);
    expect(await visits(other.id)).toBe(0);
    expect((await t.db.query('SELECT status, storage_location_id FROM trackers WHERE id = $1', [trk.id]))[0]).toEqual({
      status: 'IN_STORAGE',
      storage_location_id: S.id,
    });

    expect(await run([])).toMatch(/^Replayed geofences of \d+ tracker\(s\)/);
    expect(await visits(other.id)).toBe(1);
    await expect(run(['--tracker', 'x'])).rejects.toThrow('--tracker must be a positive integer');
    await expect(run(['--tracker', '999999'])).rejects.toThrow('tracker 999999 not found');
  });

  it('check_geofence_processing fails while a mark waits longer than 60 s, and passes once processed', async () => {
    const pipeline = async () => (await t.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200)).body;
    const healthy = (await pipeline()).test_steps.check_geofence_processing;
    expect(healthy).toMatchObject({
      success: true,
      details: { enabled: true, waiting_trackers: 0, overdue_trackers: 0, max_wait_seconds: 60 },
    });

    const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    // A mark held by a live claim of another (stuck) worker, waiting for two minutes.
    await t.db.query(
      `INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, claimed_until) VALUES ($1, $2, now() - interval '2 minutes', now() + interval '1 hour')`,
      [trk.id, at(1)],
    );
    try {
      const body = await pipeline();
      expect(body.test_steps.check_geofence_processing).toMatchObject({
        success: false,
        details: { waiting_trackers: 1, overdue_trackers: 1 },
      });
      expect(body.test_steps.check_geofence_processing.details.oldest_wait_seconds).toBeGreaterThanOrEqual(120);
      expect(body.recommendations).toEqual([
        expect.objectContaining({ severity: 'warning', documentation: 'docs/operations.md#check_geofence_processing' }),
      ]);
    } finally {
      await t.db.query(`UPDATE geofence_pending SET claimed_until = NULL WHERE tracker_id = $1`, [trk.id]);
    }
    await settled(t);
    expect((await pipeline()).test_steps.check_geofence_processing.success).toBe(true);
  });

  it('a queue behind the 2 s goal shows in pipeline health and in geofence_backlog_oldest_seconds before any replay ends', async () => {
    const step = async () =>
      (await t.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200)).body.test_steps
        .check_geofence_processing;
    const oldest = async () =>
      Number(/^geofence_backlog_oldest_seconds (\S+)$/m.exec((await t.http().get('/metrics').expect(200)).text)?.[1]);
    expect(await step()).toMatchObject({ details: { lag_goal_seconds: 2, behind_lag_goal: false } });
    const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    // Waiting 30 s (held by a live claim of another worker): behind the goal, not yet overdue.
    await t.db.query(
      `INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, claimed_until) VALUES ($1, $2, now() - interval '30 seconds', now() + interval '1 hour')`,
      [trk.id, at(1)],
    );
    try {
      expect(await step()).toMatchObject({ success: true, details: { behind_lag_goal: true, overdue_trackers: 0 } });
      // A scrape answers with the previous reading when the database is slow: ask until it arrives.
      await eventually(oldest, (s) => s >= 30);
    } finally {
      await t.db.query(`UPDATE geofence_pending SET claimed_until = NULL WHERE tracker_id = $1`, [trk.id]);
    }
    await settled(t);
    expect(await step()).toMatchObject({ details: { behind_lag_goal: false } });
  });

  it('check_geofence_processing reads a bounded part of a large backlog, oldest first, and says so', async () => {
    const pipeline = async () =>
      (await t.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200)).body.test_steps
        .check_geofence_processing;
    const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    // The oldest mark (overdue), then one row naming more trackers than the step reads; both held
    // by a live claim of another (stuck) worker.
    await t.db.query(
      `INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, claimed_until) VALUES ($1, $2, now() - interval '5 minutes', now() + interval '1 hour')`,
      [trk.id, at(1)],
    );
    await t.db.query(
      `INSERT INTO geofence_pending (trackers, froms, claimed_until)
       SELECT array_agg(1000000 + g), array_agg($2::timestamptz), now() + interval '1 hour' FROM generate_series(1, $1) g`,
      [GEOFENCE_BACKLOG_SCAN + 10, at(1)],
    );
    try {
      const step = await pipeline();
      expect(step).toMatchObject({
        success: false,
        details: { truncated: true, waiting_trackers: GEOFENCE_BACKLOG_SCAN + 1, overdue_trackers: 1 },
      });
      expect(step.details.oldest_wait_seconds).toBeGreaterThanOrEqual(300);
      expect(step.issues).toEqual([`At least 1 trackers have reports waiting more than 60 s for geofence processing`]);
    } finally {
      await t.db.query(`DELETE FROM geofence_pending WHERE trackers IS NOT NULL AND cardinality(trackers) > $1`, [
        GEOFENCE_BACKLOG_SCAN,
      ]);
      await t.db.query(`UPDATE geofence_pending SET claimed_until = NULL WHERE tracker_id = $1`, [trk.id]);
    }
    await settled(t);
    expect(await pipeline()).toMatchObject({ success: true, details: { truncated: false, waiting_trackers: 0 } });
  });

  it('exposes replay counters and the processing lag on /metrics', async () => {
    const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    expect(
      (await postReports(t, w.ingest, [report(trk.id, at(1), ORIGIN), report(trk.id, at(2), north(-50_000))])).status,
    ).toBe(200);
    await settled(t);
    const text = (await t.http().get('/metrics').expect(200)).text;
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('geofence_replays_total')).toBeGreaterThanOrEqual(1);
    expect(value('geofence_visits_opened_total')).toBeGreaterThanOrEqual(1);
    expect(value('geofence_visits_confirmed_total')).toBeGreaterThanOrEqual(1);
    expect(value('geofence_automatic_entries_total')).toBeGreaterThanOrEqual(2);
    expect(value('geofence_processing_lag_seconds_count')).toBeGreaterThanOrEqual(1);
  });
});
