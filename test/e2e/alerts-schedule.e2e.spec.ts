import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApp } from '../support/app.js';
import { backdatedTracker, HOUR, type Alert } from '../support/alerts.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

const CHECK_SECONDS = 2;

/** The periodic check on its own timer: nothing here runs it by hand. */
describe('Alerts: the periodic check', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: { ALERT_CHECK_SECONDS: String(CHECK_SECONDS) } }));
  }, 60_000);
  afterAll(() => t?.close());

  const openAlerts = async (trackerId: number): Promise<Alert[]> =>
    (await t.http().get(`${TRACKERS}/${trackerId}/alerts`).query({ open: true }).set(w.admin.auth).expect(200)).body
      .items;

  it(`opens a silent tracker's alert within a few ${CHECK_SECONDS} s intervals`, async () => {
    const since = Date.now();
    const id = await backdatedTracker(t, w.runA.id, [
      ['CREATED', 31 * HOUR],
      ['IN_TRANSIT', 30 * HOUR],
    ]);
    // One interval plus 5 s is the promise; three intervals plus 5 s leave room for a loaded host.
    const deadline = since + (3 * CHECK_SECONDS + 5) * 1000;
    let alerts = await openAlerts(id);
    while (alerts.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      alerts = await openAlerts(id);
    }
    expect(alerts).toMatchObject([{ kind: 'silent', tracker_id: id, details: { last_report_at: null } }]);
    expect(Date.parse(alerts[0].opened_at) - since).toBeLessThan((CHECK_SECONDS + 5) * 1000);
  }, 30_000);
});
