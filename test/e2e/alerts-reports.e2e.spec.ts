import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AlertCheckService } from '../../src/alerts/alert-check.service.js';
import type { TestApp } from '../support/app.js';
import { backdatedTracker, HOUR, type Alert } from '../support/alerts.js';
import { postReports, report } from '../support/locations.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Alerts and the reports that feed them: only reports actually stored count (a duplicate changes
 * nothing), and a report committed while the check runs is never overtaken by an alert it ends.
 */
describe('Alerts and location reports', () => {
  let t: TestApp;
  let w: TrackerWorld;

  const inTransitSince = (runId: number, hoursAgo: number) =>
    backdatedTracker(t, runId, [
      ['CREATED', (hoursAgo + 1) * HOUR],
      ['IN_TRANSIT', hoursAgo * HOUR],
    ]);

  const check = () => t.app.get(AlertCheckService).runOnce();

  const alertsOf = async (trackerId: number): Promise<Alert[]> =>
    (await t.http().get(`${TRACKERS}/${trackerId}/alerts`).set(w.admin.auth).expect(200)).body.items;

  const eventsOf = async (trackerId: number) =>
    (await t.db.query(
      `SELECT type, alert->>'kind' AS kind FROM notification_events
        WHERE tracker_id = $1 AND type <> 'tracker.status_changed' ORDER BY id`,
      [trackerId],
    )) as { type: string; kind: string }[];

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: { ALERT_CHECK_SECONDS: '86400' } }));
  }, 60_000);
  afterAll(() => t?.close());

  describe('a duplicate report', () => {
    const at = () => new Date(Date.now() - 10 * 60_000).toISOString();

    it('with a low battery opens no battery_low alert', async () => {
      const id = await inTransitSince(w.runA.id, 1);
      const sent = report(id, at(), { battery: 80 } as object);
      await postReports(t, w.ingest, [sent]).expect(200);
      const res = await postReports(t, w.ingest, [{ ...sent, battery: 5 }]).expect(200);
      expect(res.body).toMatchObject({ accepted: 0, duplicates: 1 });
      await check();
      expect(await alertsOf(id)).toEqual([]);
    });

    it('with a high battery does not resolve an open battery_low alert', async () => {
      const id = await inTransitSince(w.runA.id, 1);
      const sent = report(id, at(), { battery: 5 } as object);
      await postReports(t, w.ingest, [sent]).expect(200);
      await check();
      expect(await alertsOf(id)).toMatchObject([{ kind: 'battery_low', resolved_at: null, details: { battery: 5 } }]);
      await postReports(t, w.ingest, [{ ...sent, battery: 90 }]).expect(200);
      expect(await alertsOf(id)).toMatchObject([{ kind: 'battery_low', resolved_at: null }]);
      await check();
      expect(await alertsOf(id)).toMatchObject([{ kind: 'battery_low', resolved_at: null }]);
    });

    it('in the same batch as the report it repeats: the first one counts', async () => {
      const id = await inTransitSince(w.runA.id, 1);
      const sent = report(id, at(), { battery: 70 } as object);
      const res = await postReports(t, w.ingest, [sent, { ...sent, battery: 3 }]).expect(200);
      expect(res.body).toMatchObject({ accepted: 1, duplicates: 1 });
      await check();
      expect(await alertsOf(id)).toEqual([]);
    });
  });

  describe('a report committed while the check runs', () => {
    it('is seen before a silent alert opens: no alert, no events', async () => {
      // A stale alert the check will resolve: its statement waits on that alert's row, held here,
      // after its snapshot was taken.
      const run = await t.factories.run({ clientId: w.clientA.id });
      const stale = await inTransitSince(run.id, 30);
      await check();
      const [held] = await alertsOf(stale);
      await t.db.query('UPDATE production_runs SET alert_silent_hours = 720 WHERE id = $1', [run.id]);
      const quiet = await inTransitSince(w.runA.id, 30);

      const holder = t.db.createQueryRunner();
      await holder.connect();
      let checking: Promise<unknown> | undefined;
      try {
        await holder.startTransaction();
        await holder.query('SELECT id FROM alerts WHERE id = $1 FOR UPDATE', [held.id]);
        const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
        checking = check();
        await waitUntilBlockedBy(t, pid);
        // The silent tracker reports while the check's statement is under way.
        await postReports(t, w.ingest, [report(quiet, new Date().toISOString())]).expect(200);
        await holder.commitTransaction();
        await checking;
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
        await checking?.catch(() => undefined);
      }
      expect((await alertsOf(stale))[0].resolved_at).not.toBeNull();
      expect(await alertsOf(quiet)).toEqual([]);
      expect(await eventsOf(quiet)).toEqual([]);
    });

    it('that waits for an opening resolves the alert the opening committed: opened, then resolved', async () => {
      const quiet = await inTransitSince(w.runA.id, 30);
      // An uncommitted open alert of the same (tracker, kind), held here, stops the check's opening at
      // its insert, after the check took the tracker's rows.
      const holder = t.db.createQueryRunner();
      await holder.connect();
      let checking: Promise<unknown> | undefined;
      let posting: Promise<unknown> | undefined;
      try {
        await holder.startTransaction();
        await holder.query(`INSERT INTO alerts (kind, tracker_id, details) VALUES ('silent', $1, '{}')`, [quiet]);
        const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
        checking = check();
        const checker = await waitUntilBlockedBy(t, pid);
        let posted = false;
        posting = postReports(t, w.ingest, [report(quiet, new Date().toISOString())])
          .expect(200)
          .then(() => (posted = true));
        // The report's batch now waits for the check (or, without that lock, went through).
        await waitUntilBlockedBy(t, checker, () => posted);
        await holder.rollbackTransaction();
        await checking;
        await posting;
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
        await checking?.catch(() => undefined);
        await posting?.catch(() => undefined);
      }
      const alerts = await alertsOf(quiet);
      expect(alerts).toMatchObject([{ kind: 'silent' }]);
      expect(alerts[0].resolved_at).not.toBeNull();
      expect(await eventsOf(quiet)).toEqual([
        { type: 'tracker.alert_opened', kind: 'silent' },
        { type: 'tracker.alert_resolved', kind: 'silent' },
      ]);
    });
  });
});

/**
 * Until another backend waits for a lock that backend `pid` holds; answers that backend's pid. With
 * `orElse`, stops waiting (answering 0) once it is true.
 */
async function waitUntilBlockedBy(t: TestApp, pid: number, orElse?: () => boolean): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const rows = (await t.db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))`,
      [pid],
    )) as { pid: number }[];
    if (rows.length > 0) return rows[0].pid;
    if (orElse?.()) return 0;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nothing waited for backend ${pid}`);
}
