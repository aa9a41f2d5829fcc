import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { AlertCheckService } from '../../src/alerts/alert-check.service.js';
import type { TestApp } from '../support/app.js';
import { backdatedTracker, HOUR } from '../support/alerts.js';
import { bearer } from '../support/auth.js';
import { postReports, report } from '../support/locations.js';
import { listening, openStream, type SseClient } from '../support/notifications.js';
import { createTrackerWorld, type TrackerWorld } from '../support/trackers.js';

const N = '/api/v1/notifications';

interface Notification {
  id: number;
  event: { type: string };
}

const isAlert = (n: unknown): boolean => (n as Notification).event.type.startsWith('tracker.alert_');

/** Alert events on the live notification stream, for the users whose in-app preference is on. */
describe('Alert events on the notification stream', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let base: string;
  const open: SseClient[] = [];

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: { ALERT_CHECK_SECONDS: '86400' } }));
    base = await listening(t);
  }, 60_000);
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  afterAll(() => t?.close());

  const stream = async (token: string) => {
    const s = await openStream(base, { headers: bearer(token) });
    open.push(s);
    expect(s.status).toBe(200);
    return s;
  };
  /** The stream's alert events once `count` of them arrived (status changes of the set-up pass by), within 2 s. */
  const alertEvents = async (s: SseClient, count: number) => {
    const deadline = Date.now() + 2000;
    const alerts = () => s.events.filter((e) => isAlert(e.data));
    while (alerts().length < count) await s.waitFor(s.events.length + 1, Math.max(1, deadline - Date.now()));
    return alerts();
  };
  const inbox = async (auth: { Authorization: string }) =>
    (await t.http().get(`${N}?limit=1000`).set(auth).expect(200)).body.items as Notification[];
  const setUi = (auth: { Authorization: string }, ui: boolean) =>
    t
      .http()
      .patch('/api/v1/users/me')
      .set(auth)
      .send({ notification_preferences: { email: true, ui } })
      .expect(200);

  it('an opened and a resolved alert reach an open stream within 2 s, as Notifications', async () => {
    const user = await t.factories.user({ clients: [w.clientA.id] });
    const live = await stream(user.token);
    const id = await backdatedTracker(t, w.runA.id, [
      ['CREATED', 31 * HOUR],
      ['IN_TRANSIT', 30 * HOUR],
    ]);
    await t.app.get(AlertCheckService).runOnce();
    const [opened] = await alertEvents(live, 1);
    const [stored] = (await inbox(user.auth)).filter(isAlert);
    expect(opened).toEqual({ id: String(stored.id), event: 'notification', data: stored });
    expect(opened.data).toMatchObject({
      read: false,
      event: {
        type: 'tracker.alert_opened',
        tracker_id: id,
        production_run_id: w.runA.id,
        client_id: w.clientA.id,
        alert: { kind: 'silent', tracker_id: id, resolved_at: null, details: { last_report_at: null } },
      },
    });

    await postReports(t, w.ingest, [report(id, new Date().toISOString())]).expect(200);
    const [, resolved] = await alertEvents(live, 2);
    expect(resolved.data).toMatchObject({
      event: { type: 'tracker.alert_resolved', tracker_id: id, alert: { kind: 'silent' } },
    });
    expect((resolved.data as { event: { alert: { resolved_at: string | null } } }).event.alert.resolved_at).not.toBe(
      null,
    );
  });

  it('follows the ui preference at the time of the event: off, none; on again, only later ones', async () => {
    const quiet = await t.factories.user({ clients: [w.clientA.id] });
    const witness = await t.factories.user({ clients: [w.clientA.id] });
    await setUi(quiet.auth, false);
    const quietStream = await stream(quiet.token);
    const witnessStream = await stream(witness.token);
    const first = await backdatedTracker(t, w.runA.id, [
      ['CREATED', 31 * HOUR],
      ['IN_TRANSIT', 30 * HOUR],
    ]);
    await t.app.get(AlertCheckService).runOnce();
    // The witness's stream shows the event went out; the quiet user's got nothing of it.
    await alertEvents(witnessStream, 1);
    expect(quietStream.events).toEqual([]);
    expect(await inbox(quiet.auth)).toEqual([]);

    await setUi(quiet.auth, true);
    await postReports(t, w.ingest, [report(first, new Date().toISOString())]).expect(200);
    const [resolved] = await alertEvents(quietStream, 1);
    expect(resolved.data).toMatchObject({ event: { type: 'tracker.alert_resolved', tracker_id: first } });
    expect((await inbox(quiet.auth)).map((n) => n.event.type)).toEqual(['tracker.alert_resolved']);
  });
});
