import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AlertCheckService } from '../../src/alerts/alert-check.service.js';
import type { TestApp } from '../support/app.js';
import { ALERTS, backdatedTracker, HOUR, type Alert } from '../support/alerts.js';
import { createKey, xApiKey } from '../support/api-keys.js';
import { postReports, report } from '../support/locations.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Alerts end to end, made deterministic with back-dated status entries and reports: the periodic
 * check (run on demand) opens them, and the writes that end a condition resolve them at once.
 */
describe('Alerts', () => {
  let t: TestApp;
  let w: TrackerWorld;
  /** Entries are back-dated from one instant, so journey durations are exact. */
  const now = Date.now();

  const tracker = (runId: number, entries: [string, number, number?][], destination?: number) =>
    backdatedTracker(t, runId, entries, { destination, now });

  const inTransitSince = (runId: number, hoursAgo: number, destination?: number) =>
    tracker(
      runId,
      [
        ['CREATED', (hoursAgo + 1) * HOUR],
        ['IN_TRANSIT', hoursAgo * HOUR],
      ],
      destination,
    );

  const check = () => t.app.get(AlertCheckService).runOnce();

  const alertsOf = async (trackerId: number, auth = w.admin.auth): Promise<Alert[]> =>
    (await t.http().get(`${TRACKERS}/${trackerId}/alerts`).set(auth).expect(200)).body.items;

  const eventsOf = async (trackerId: number) =>
    (await t.db.query(
      `SELECT type, alert->>'kind' AS kind, (alert->>'id')::int AS alert_id FROM notification_events
        WHERE tracker_id = $1 AND type <> 'tracker.status_changed' ORDER BY id`,
      [trackerId],
    )) as { type: string; kind: string; alert_id: number }[];

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: { ALERT_CHECK_SECONDS: '86400' } }));
  }, 60_000);
  afterAll(() => t?.close());

  describe('silent', () => {
    it('opens once for a tracker silent for 30 hours and resolves on its next report', async () => {
      const id = await inTransitSince(w.runA.id, 30);
      expect(await check()).toMatchObject({ ran: true });
      const [alert] = await alertsOf(id);
      expect(alert).toMatchObject({
        kind: 'silent',
        tracker_id: id,
        production_run_id: w.runA.id,
        client_id: w.clientA.id,
        resolved_at: null,
        details: { last_report_at: null, threshold_hours: 24 },
      });
      await check();
      expect(await alertsOf(id)).toHaveLength(1);

      // A report from 26 hours ago does not end the silence; one from now does, at once.
      await postReports(t, w.ingest, [report(id, new Date(Date.now() - 26 * HOUR).toISOString())]).expect(200);
      expect((await alertsOf(id))[0].resolved_at).toBeNull();
      await postReports(t, w.ingest, [report(id, new Date().toISOString())]).expect(200);
      const resolved = (await t.http().get(`${ALERTS}/${alert.id}`).set(w.admin.auth).expect(200)).body as Alert;
      expect(resolved.resolved_at).not.toBeNull();
      expect(await eventsOf(id)).toEqual([
        { type: 'tracker.alert_opened', kind: 'silent', alert_id: alert.id },
        { type: 'tracker.alert_resolved', kind: 'silent', alert_id: alert.id },
      ]);
      await check();
      expect(await alertsOf(id)).toHaveLength(1);
    });

    it("follows the run's alert_silent_hours and counts the latest status entry", async () => {
      await t.db.query('UPDATE production_runs SET alert_silent_hours = 48 WHERE id = $1', [w.runA2.id]);
      const quiet = await inTransitSince(w.runA2.id, 30);
      const longer = await inTransitSince(w.runA2.id, 50);
      // Reported 60 hours ago, but a status entry 10 hours ago: not silent.
      const entered = await tracker(w.runA.id, [
        ['IN_TRANSIT', 40 * HOUR],
        ['IN_STORAGE', 10 * HOUR],
      ]);
      await check();
      expect(await alertsOf(quiet)).toEqual([]);
      expect(await alertsOf(entered)).toEqual([]);
      expect((await alertsOf(longer))[0].details).toEqual({ last_report_at: null, threshold_hours: 48 });
    });
  });

  describe('lifecycle', () => {
    it('resolves when a changed setting ends the condition, and opens a new alert when it returns', async () => {
      const run = await t.factories.run({ clientId: w.clientA.id });
      const id = await inTransitSince(run.id, 30);
      await check();
      expect(await alertsOf(id)).toMatchObject([{ kind: 'silent', resolved_at: null }]);
      await t.db.query('UPDATE production_runs SET alert_silent_hours = 72 WHERE id = $1', [run.id]);
      await check();
      expect((await alertsOf(id))[0].resolved_at).not.toBeNull();
      await t.db.query('UPDATE production_runs SET alert_silent_hours = 12 WHERE id = $1', [run.id]);
      await check();
      const [newest, first] = await alertsOf(id);
      expect(newest).toMatchObject({ resolved_at: null, details: { threshold_hours: 12 } });
      expect(first.resolved_at).not.toBeNull();
    });

    it("a deleted tracker's alerts and report activity go with it; their events stay", async () => {
      const id = await inTransitSince(w.runA.id, 30);
      await check();
      const [alert] = await alertsOf(id);
      await postReports(t, w.ingest, [report(id, new Date(Date.now() - 26 * HOUR).toISOString())]).expect(200);
      const activity = 'SELECT 1 FROM tracker_report_activity WHERE tracker_id = $1';
      expect(await t.db.query(activity, [id])).toHaveLength(1);
      await t.http().delete(`${TRACKERS}/${id}`).set(w.admin.auth).expect(200);
      expect(await t.db.query(activity, [id])).toHaveLength(0);
      await t.http().get(`${ALERTS}/${alert.id}`).set(w.admin.auth).expect(404);
      expect(await eventsOf(id)).toEqual([{ type: 'tracker.alert_opened', kind: 'silent', alert_id: alert.id }]);
    });
  });

  describe('overdue', () => {
    /** Delivered journeys to `destination`: in transit `startAgo` hours ago, each lasting `hours`. */
    async function journeys(runId: number, destination: number, hours: number[]) {
      for (const [i, h] of hours.entries()) {
        const startAgo = (300 + i * 10) * HOUR;
        await tracker(runId, [
          ['CREATED', startAgo + HOUR],
          ['IN_TRANSIT', startAgo],
          ['DELIVERED', startAgo - h * HOUR, destination],
        ]);
      }
    }

    it('opens past the p90 of comparable journeys and resolves when the tracker is delivered', async () => {
      const hours = [10, 20, 30, 40, 50];
      await journeys(w.runA.id, w.delivery.id, hours);
      // p90 of [10..50] by linear interpolation: 46 hours.
      const late = await inTransitSince(w.runA.id, 47, w.delivery.id);
      const onTime = await inTransitSince(w.runA.id, 45, w.delivery.id);
      await check();
      const overdue = (await alertsOf(late)).filter((a) => a.kind === 'overdue');
      expect(overdue).toHaveLength(1);
      expect(overdue[0].details).toMatchObject({ basis: 'destination', sample_size: 5 });
      expect(overdue[0].details.p90_days as number).toBeCloseTo(46 / 24, 12);
      expect((await alertsOf(onTime)).filter((a) => a.kind === 'overdue')).toEqual([]);

      await t
        .http()
        .post(`${TRACKERS}/${late}/status`)
        .set(w.admin.auth)
        .send({ status: 'DELIVERED', delivery_location_id: w.delivery.id })
        .expect(201);
      // Every open alert of the tracker ends with its status (silent too: it went 47 hours without a word).
      const after = await alertsOf(late);
      expect(after.length).toBeGreaterThanOrEqual(1);
      for (const alert of after) expect(alert.resolved_at).not.toBeNull();
      expect((await eventsOf(late)).filter((e) => e.type === 'tracker.alert_resolved')).toHaveLength(after.length);
    });

    it("needs five comparable journeys of the tracker's own client", async () => {
      // Client B has four journeys only (A's do not count for B).
      await journeys(w.runB.id, w.delivery.id, [1, 2, 3, 4]);
      const b = await inTransitSince(w.runB.id, 100, w.delivery.id);
      await check();
      expect((await alertsOf(b)).filter((a) => a.kind === 'overdue')).toEqual([]);
    });
  });

  describe('battery_low', () => {
    it('opens at or below ALERT_BATTERY_PERCENT and resolves on a newer, higher level', async () => {
      const id = await inTransitSince(w.runA.id, 1);
      const at = new Date(Date.now() - 10 * 60_000).toISOString();
      await postReports(t, w.ingest, [report(id, at, { battery: 15 } as object)]).expect(200);
      await check();
      const [alert] = await alertsOf(id);
      expect(alert).toMatchObject({
        kind: 'battery_low',
        details: { battery: 15, reported_at: at },
        resolved_at: null,
      });
      // An older report with a higher level changes nothing; a newer one ends it.
      await postReports(t, w.ingest, [
        report(id, new Date(Date.now() - 20 * 60_000).toISOString(), { battery: 90 } as object),
      ]).expect(200);
      expect((await alertsOf(id))[0].resolved_at).toBeNull();
      await postReports(t, w.ingest, [report(id, new Date().toISOString(), { battery: 16 } as object)]).expect(200);
      expect((await alertsOf(id))[0].resolved_at).not.toBeNull();
    });
  });

  describe('reading them', () => {
    let a: number;
    let b: number;
    beforeAll(async () => {
      a = await inTransitSince(w.runA.id, 80);
      b = await inTransitSince(w.runB.id, 80);
      await check();
    });

    it("never shows a user another client's alerts", async () => {
      const [bAlert] = await alertsOf(b);
      const page = (await t.http().get(ALERTS).query({ limit: 1000 }).set(w.userA.auth).expect(200)).body;
      expect(page.items.length).toBeGreaterThan(0);
      for (const alert of page.items as Alert[]) expect(alert.client_id).toBe(w.clientA.id);
      await t.http().get(`${ALERTS}/${bAlert.id}`).set(w.userA.auth).expect(404, { detail: 'Alert not found' });
      await t.http().get(`${TRACKERS}/${b}/alerts`).set(w.userA.auth).expect(404, { detail: 'Tracker not found' });
      const filtered = await t.http().get(ALERTS).query({ tracker_id: b }).set(w.userA.auth).expect(200);
      expect(filtered.body).toMatchObject({ items: [], total: 0 });
      await t
        .http()
        .get(`/api/v1/production-runs/${w.runB.id}/alerts/summary`)
        .set(w.userA.auth)
        .expect(404, { detail: 'Production run not found' });
      expect((await alertsOf(a, w.userA.auth)).map((x) => x.kind)).toContain('silent');
    });

    it("reads with an API key's read scope, narrowed to the key's clients", async () => {
      const narrowed = await createKey(t, w.admin.auth, { scopes: ['read'], client_ids: [w.clientB.id] });
      const page = (await t.http().get(ALERTS).query({ limit: 1000 }).set(xApiKey(narrowed.key)).expect(200)).body;
      expect(page.items.map((x: Alert) => x.tracker_id)).toContain(b);
      for (const alert of page.items as Alert[]) expect(alert.client_id).toBe(w.clientB.id);
      await t.http().get(`${TRACKERS}/${a}/alerts`).set(xApiKey(narrowed.key)).expect(404);
      const writer = await createKey(t, w.admin.auth, { scopes: ['write', 'ingest'] });
      await t.http().get(ALERTS).set(xApiKey(writer.key)).expect(403, { detail: 'Not enough permissions' });
    });

    it('filters by open, kind, tracker and run, newest opened first', async () => {
      const open = (
        await t
          .http()
          .get(ALERTS)
          .query({ open: 'true', kind: 'silent,battery_low', limit: 1000 })
          .set(w.admin.auth)
          .expect(200)
      ).body.items as Alert[];
      expect(open.length).toBeGreaterThan(0);
      for (const x of open) expect(x.resolved_at === null && ['silent', 'battery_low'].includes(x.kind)).toBe(true);
      const keys = open.map((x) => [x.opened_at, x.id] as const);
      const sorted = [...keys].sort((p, q) => (p[0] === q[0] ? q[1] - p[1] : p[0] < q[0] ? 1 : -1));
      expect(keys).toEqual(sorted);
      const resolved = (await t.http().get(ALERTS).query({ open: 0, limit: 1000 }).set(w.admin.auth).expect(200)).body
        .items as Alert[];
      for (const x of resolved) expect(x.resolved_at).not.toBeNull();
      const ofRun = (await t.http().get(ALERTS).query({ production_run_id: w.runB.id }).set(w.admin.auth).expect(200))
        .body.items as Alert[];
      for (const x of ofRun) expect(x.production_run_id).toBe(w.runB.id);
      expect(ofRun.map((x) => x.tracker_id)).toContain(b);
    });

    it('counts open alerts per run', async () => {
      const counted = (await t.db.query(
        `SELECT a.kind, count(*)::int AS n FROM alerts a JOIN trackers t ON t.id = a.tracker_id
          WHERE t.production_run_id = $1 AND a.resolved_at IS NULL GROUP BY a.kind`,
        [w.runA.id],
      )) as { kind: string; n: number }[];
      const expected = { silent: 0, overdue: 0, battery_low: 0 };
      for (const row of counted) expected[row.kind as keyof typeof expected] = row.n;
      expect(expected.silent).toBeGreaterThan(0);
      const res = await t.http().get(`/api/v1/production-runs/${w.runA.id}/alerts/summary`).set(w.userA.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
    });

    it('answers 422 for bad filters', async () => {
      for (const query of [
        { kind: 'late' },
        { kind: 'silent,nope' },
        { open: 'maybe' },
        { tracker_id: 'x' },
        { limit: 0 },
      ]) {
        const res = await t.http().get(ALERTS).query(query).set(w.admin.auth).expect(422);
        expect(typeof res.body.detail).toBe('string');
      }
      await t.http().get(`${TRACKERS}/${a}/alerts`).query({ kind: 'loud' }).set(w.admin.auth).expect(422);
      await t.http().get(`${ALERTS}/abc`).set(w.admin.auth).expect(422);
      await t.http().get(`${ALERTS}/999999`).set(w.admin.auth).expect(404, { detail: 'Alert not found' });
      await t.http().get(ALERTS).set(w.ingest.auth).expect(403);
    });
  });
});
