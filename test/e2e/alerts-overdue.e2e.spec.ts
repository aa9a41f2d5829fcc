import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AlertCheckService } from '../../src/alerts/alert-check.service.js';
import type { TestApp } from '../support/app.js';
import { backdatedTracker, HOUR, percentileCont, type Alert } from '../support/alerts.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * `overdue` when the tracker's destination has fewer than 5 comparable journeys: the p90 of all the
 * client's comparable journeys (every destination) decides, checked against a reference percentile.
 */
describe('Alerts: overdue over all destinations', () => {
  let t: TestApp;
  let w: TrackerWorld;
  const now = Date.now();

  // Client A: two journeys to w.delivery, five to w.delivery2; client B: six to w.delivery (never A's).
  const toDelivery = [30, 90];
  const toDelivery2 = [12, 20, 25, 44, 61];
  const allOfA = [...toDelivery, ...toDelivery2];

  const tracker = (runId: number, entries: [string, number, number?][], destination?: number) =>
    backdatedTracker(t, runId, entries, { destination, now });

  /** Delivered journeys to `destination`, each `hours` long, started 200 + 10·i hours ago. */
  async function journeys(runId: number, destination: number, hours: number[]) {
    for (const [i, h] of hours.entries()) {
      const startAgo = (200 + i * 10) * HOUR;
      await tracker(runId, [
        ['CREATED', startAgo + HOUR],
        ['IN_TRANSIT', startAgo],
        ['DELIVERED', startAgo - h * HOUR, destination],
      ]);
    }
  }

  const inTransitFor = (hours: number, destination: number) =>
    tracker(
      w.runA.id,
      [
        ['CREATED', hours * HOUR + HOUR],
        ['IN_TRANSIT', hours * HOUR],
      ],
      destination,
    );

  const overdueOf = async (trackerId: number): Promise<Alert[]> =>
    (
      (await t.http().get(`${TRACKERS}/${trackerId}/alerts`).set(w.admin.auth).expect(200)).body.items as Alert[]
    ).filter((a) => a.kind === 'overdue');

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: { ALERT_CHECK_SECONDS: '86400' } }));
    await journeys(w.runA.id, w.delivery.id, toDelivery);
    await journeys(w.runA2.id, w.delivery2.id, toDelivery2);
    await journeys(w.runB.id, w.delivery.id, [1, 2, 3, 4, 5, 6]);
  }, 60_000);
  afterAll(() => t?.close());

  it('uses the p90 of every comparable journey of the client when its destination has fewer than 5', async () => {
    const p90 = percentileCont(allOfA, 0.9);
    // The destination's two journeys alone, or client B's six to it, would give other thresholds.
    expect(p90).not.toBeCloseTo(percentileCont(toDelivery, 0.9), 0);
    const late = await inTransitFor(Math.ceil(p90) + 1, w.delivery.id);
    const onTime = await inTransitFor(Math.floor(p90) - 1, w.delivery.id);
    await t.app.get(AlertCheckService).runOnce();

    const [alert] = await overdueOf(late);
    expect(alert).toMatchObject({
      resolved_at: null,
      details: {
        start: new Date(now - (Math.ceil(p90) + 1) * HOUR).toISOString(),
        basis: 'all',
        sample_size: allOfA.length,
      },
    });
    expect(alert.details.p90_days as number).toBeCloseTo(p90 / 24, 9);
    expect(await overdueOf(onTime)).toEqual([]);
  });

  it('keeps to the destination when it has 5: the same elapsed time is not overdue there', async () => {
    const p90 = percentileCont(toDelivery2, 0.9);
    expect(p90).toBeLessThan(percentileCont(allOfA, 0.9));
    const past = await inTransitFor(Math.ceil(p90) + 1, w.delivery2.id);
    await t.app.get(AlertCheckService).runOnce();
    const [alert] = await overdueOf(past);
    expect(alert.details).toMatchObject({ basis: 'destination', sample_size: toDelivery2.length });
    expect(alert.details.p90_days as number).toBeCloseTo(p90 / 24, 9);
  });
});
