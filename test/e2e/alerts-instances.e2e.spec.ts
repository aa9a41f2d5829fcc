import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ALERT_CHECK_LOCK_KEY } from '../../src/alerts/alert-check.repository.js';
import { AlertCheckService } from '../../src/alerts/alert-check.service.js';
import { closeApps, createPeerApp, type TestApp } from '../support/app.js';
import { postReports, report } from '../support/locations.js';
import { createTwoInstances, type TrackerWorld } from '../support/trackers.js';

const HOUR = 3_600_000;
const ENV = { env: { ALERT_CHECK_SECONDS: '86400' } };

/** Several instances check alerts against one database: each alert opens once, and survives restarts. */
describe('Alerts with several instances', () => {
  let a: TestApp;
  let b: TestApp;
  let w: TrackerWorld;

  async function silentTracker(): Promise<number> {
    const [{ id }] = (await a.db.query(`INSERT INTO trackers (name, production_run_id) VALUES ($1, $2) RETURNING id`, [
      `multi-${Math.random().toString(36).slice(2, 8)}`,
      w.runA.id,
    ])) as { id: number }[];
    await a.db.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp) VALUES ($1, 'IN_TRANSIT', $2)`,
      [id, new Date(Date.now() - 30 * HOUR)],
    );
    await a.db.query('SELECT trackers_follow_latest_entry(ARRAY[$1]::int[])', [id]);
    return id;
  }

  const state = async (trackerId: number) => {
    const [row] = (await a.db.query(
      `SELECT (SELECT count(*)::int FROM alerts WHERE tracker_id = $1) AS alerts,
              (SELECT count(*)::int FROM alerts WHERE tracker_id = $1 AND resolved_at IS NULL) AS open,
              (SELECT count(*)::int FROM notification_events WHERE tracker_id = $1 AND type = 'tracker.alert_opened') AS opened_events`,
      [trackerId],
    )) as { alerts: number; open: number; opened_events: number }[];
    return row;
  };

  beforeAll(async () => {
    ({ a, b, w } = await createTwoInstances(ENV));
  }, 60_000);
  afterAll(() => closeApps(b, a));

  it('two instances checking at once open each alert once', async () => {
    const ids = [await silentTracker(), await silentTracker(), await silentTracker()];
    const runs = await Promise.all([
      a.app.get(AlertCheckService).runOnce(),
      b.app.get(AlertCheckService).runOnce(),
      a.app.get(AlertCheckService).runOnce(),
      b.app.get(AlertCheckService).runOnce(),
    ]);
    expect(runs.some((run) => run.ran)).toBe(true);
    // Whoever checks next finds nothing to open.
    await b.app.get(AlertCheckService).runOnce();
    await a.app.get(AlertCheckService).runOnce();
    for (const id of ids) expect(await state(id)).toEqual({ alerts: 1, open: 1, opened_events: 1 });
  });

  it('an instance skips the check while another holds its lock', async () => {
    const holder = await a.db.createQueryRunner();
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [ALERT_CHECK_LOCK_KEY]);
      const id = await silentTracker();
      expect(await b.app.get(AlertCheckService).runOnce()).toEqual({ ran: false });
      expect(await state(id)).toEqual({ alerts: 0, open: 0, opened_events: 0 });
      await holder.query('SELECT pg_advisory_unlock($1)', [ALERT_CHECK_LOCK_KEY]);
      expect(await b.app.get(AlertCheckService).runOnce()).toMatchObject({ ran: true });
      expect(await state(id)).toEqual({ alerts: 1, open: 1, opened_events: 1 });
    } finally {
      await holder.release();
    }
  });

  it('a restart neither duplicates nor loses an open alert', async () => {
    const id = await silentTracker();
    await a.app.get(AlertCheckService).runOnce();
    expect(await state(id)).toEqual({ alerts: 1, open: 1, opened_events: 1 });
    await b.close();
    b = await createPeerApp(a, ENV);
    expect(await b.app.get(AlertCheckService).runOnce()).toMatchObject({ ran: true, opened: 0 });
    expect(await state(id)).toEqual({ alerts: 1, open: 1, opened_events: 1 });
    const res = await b.http().get(`/api/v1/trackers/${id}/alerts`).query({ open: true }).set(w.admin.auth).expect(200);
    expect(res.body.total).toBe(1);
  });

  it('with ALERTS_ENABLED=false an instance keeps no report activity and resolves nothing on reports', async () => {
    const id = await silentTracker();
    await a.app.get(AlertCheckService).runOnce();
    const off = await createPeerApp(a, { env: { ALERTS_ENABLED: 'false', ALERT_CHECK_SECONDS: '86400' } });
    try {
      await postReports(off, w.ingest, [report(id, new Date().toISOString(), { battery: 2 } as object)]).expect(200);
      // The check left the empty row it held while opening the alert; the report did not touch it.
      const activity = await a.db.query(
        'SELECT last_report_at, battery, battery_at FROM tracker_report_activity WHERE tracker_id = $1',
        [id],
      );
      expect(activity).toEqual([{ last_report_at: null, battery: null, battery_at: null }]);
      expect(await state(id)).toEqual({ alerts: 1, open: 1, opened_events: 1 });
    } finally {
      await off.close();
    }
  });
});
