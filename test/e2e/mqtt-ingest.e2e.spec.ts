import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { MqttClient } from 'mqtt';
import { MqttIngestService } from '../../src/devices/mqtt-ingest.service.js';
import { createTestApp, GEOFENCE_ON, type TestApp } from '../support/app.js';
import { deviceFixture, deviceTracker, storedReports, uniqueDeviceId } from '../support/devices.js';
import { at, FAR, history, north, sendTimeline, settled } from '../support/geofences.js';
import {
  badMessages,
  metricValue,
  mqttEnv,
  publish,
  publisher,
  reportTopic,
  storedCount,
  subscribed,
  uniqueMqttPrefix,
  until,
} from '../support/mqtt.js';
import { trackerWorld, type TrackerWorld } from '../support/trackers.js';

const run = promisify(execFile);

describe('MQTT ingest against the real broker', () => {
  const prefix = uniqueMqttPrefix();
  let t: TestApp;
  let w: TrackerWorld;
  let pub: MqttClient;
  const topicOf = (deviceId: string) => reportTopic(prefix, deviceId);

  beforeAll(async () => {
    t = await createTestApp({ env: { ...mqttEnv(prefix), ...GEOFENCE_ON } });
    w = await trackerWorld(t);
    await subscribed(t);
    pub = await publisher();
  });
  afterAll(async () => {
    await pub?.endAsync();
    await t?.close();
  });

  it('stores a report and a list of reports (golden fixtures): source mqtt, confidence 3 unless sent, aggregated into latest_location', async () => {
    const device = await deviceTracker(t, w.runA.id);
    await publish(pub, topicOf(device.deviceId), deviceFixture('mqtt-report.json'));
    await publish(pub, topicOf(device.deviceId), deviceFixture('mqtt-reports.json'));
    await until(
      () => storedCount(t, device.id),
      (n) => n === 3,
    );
    expect(await storedReports(t, device.id)).toEqual([
      {
        timestamp: '2025-11-28T09:00:00.000Z',
        latitude: 52.5204,
        longitude: 13.405,
        confidence: 3,
        accuracy_m: 9,
        battery: 64,
        source: 'mqtt',
      },
      expect.objectContaining({ timestamp: '2025-11-28T09:01:00.000Z', confidence: 2, source: 'mqtt' }),
      expect.objectContaining({ timestamp: '2025-11-28T09:02:00.000Z', confidence: 1, accuracy_m: 30 }),
    ]);
    // The confidence-1 report is stored but not eligible: the latest location is the 09:01 one.
    const detail = await t.http().get(`/api/v1/trackers/${device.id}`).set(w.admin.auth).expect(200);
    expect(detail.body.latest_location).toMatchObject({ reported_at: expect.stringMatching(/^2025-11-28T09:01:00/) });
  });

  it('stores what mosquitto_pub publishes', async () => {
    const device = await deviceTracker(t, w.runA.id);
    const payload = JSON.stringify({ timestamp: '2025-11-28T10:00:00Z', latitude: 48.1, longitude: 11.6 });
    const { port, hostname } = new URL(mqttEnv(prefix).MQTT_URL);
    await run('mosquitto_pub', [
      '-h',
      hostname,
      '-p',
      port || '1883',
      '-q',
      '1',
      '-t',
      topicOf(device.deviceId),
      '-m',
      payload,
    ]);
    await until(
      () => storedCount(t, device.id),
      (n) => n === 1,
    );
    expect(await storedReports(t, device.id)).toEqual([
      expect.objectContaining({ timestamp: '2025-11-28T10:00:00.000Z', latitude: 48.1, confidence: 3, source: 'mqtt' }),
    ]);
  });

  it('drives geofences exactly like the same reports over HTTP', async () => {
    const createdAt = at(0);
    const viaHttp = await t.factories.tracker({ runId: w.runA.id, createdAt });
    const viaMqtt = await t.factories.tracker({ runId: w.runA.id, createdAt });
    const deviceId = uniqueDeviceId('geo');
    await t.db.query('UPDATE trackers SET device_id = $1 WHERE id = $2', [deviceId, viaMqtt.id]);
    await t
      .http()
      .post('/api/v1/storage-locations')
      .set(w.admin.auth)
      .send({
        name: `${prefix}-store`,
        ...north(0),
        radius_m: 500,
        dwell_minutes: 0,
      });
    const timeline: [number, { latitude: number; longitude: number }][] = [
      [1, FAR],
      [30, north(10)],
      [45, north(20)],
    ];
    await sendTimeline(t, w.ingest, viaHttp.id, timeline);
    await publish(
      pub,
      topicOf(deviceId),
      timeline.map(([minute, where]) => ({ timestamp: at(minute), ...where })),
    );
    await until(
      () => storedCount(t, viaMqtt.id),
      (n) => n === 3,
    );
    await settled(t, 5000);
    const strip = (entries: Awaited<ReturnType<typeof history>>) =>
      entries.map(({ status, timestamp, source }) => ({ status, timestamp, source }));
    const expected = strip(await history(t, w.admin.auth, viaHttp.id));
    expect(expected.map((e) => e.status)).toEqual(['CREATED', 'IN_TRANSIT', 'IN_STORAGE']);
    expect(strip(await history(t, w.admin.auth, viaMqtt.id))).toEqual(expected);
  });

  it('counts and acknowledges garbage without stopping: not JSON, wrong shapes, bad values, unknown device, a bad topic, 10 MB', async () => {
    const device = await deviceTracker(t, w.runA.id);
    const topic = topicOf(device.deviceId);
    const before = await badMessages(t);
    const received = await metricValue(t, 'mqtt_ingest_messages_total');
    await publish(pub, topic, 'not json {');
    await publish(pub, topic, '42');
    await publish(pub, topic, '[]');
    await publish(pub, topic, { timestamp: 'yesterday', latitude: '52', longitude: 13 });
    // One bad report of two: the good one is stored, the message counted once.
    await publish(pub, topic, [
      { timestamp: '2025-11-28T11:00:00Z', latitude: 52, longitude: 13 },
      { timestamp: '2025-11-28T11:01:00Z', latitude: 952, longitude: 13 },
    ]);
    await publish(pub, topic, [
      { tracker_id: device.id, timestamp: '2025-11-28T11:02:00Z', latitude: 1, longitude: 2 },
    ]);
    await publish(pub, topicOf(uniqueDeviceId('nobody')), {
      timestamp: '2025-11-28T11:00:00Z',
      latitude: 1,
      longitude: 2,
    });
    await publish(pub, `${prefix}/not a device/reports`, {
      timestamp: '2025-11-28T11:00:00Z',
      latitude: 1,
      longitude: 2,
    });
    await publish(pub, topic, Buffer.alloc(10 * 1024 * 1024, 0x20));
    await until(
      () => metricValue(t, 'mqtt_ingest_messages_total'),
      (n) => n === received + 9,
    );
    await until(
      () => metricValue(t, 'mqtt_ingest_pending_messages'),
      (n) => n === 0,
    );
    const after = await badMessages(t);
    const delta = Object.fromEntries(Object.entries(after).map(([reason, n]) => [reason, n - (before[reason] ?? 0)]));
    expect(delta).toEqual({
      too_large: 1,
      not_json: 1,
      not_reports: 2,
      bad_topic: 1,
      unknown_device: 1,
      invalid_reports: 3,
      unstorable: 0,
    });
    expect((await storedReports(t, device.id)).map((r) => r.timestamp)).toEqual(['2025-11-28T11:00:00.000Z']);
    // Still consuming.
    await publish(pub, topic, { timestamp: '2025-11-28T12:00:00Z', latitude: 52, longitude: 13 });
    await until(
      () => storedCount(t, device.id),
      (n) => n === 2,
    );
    // Every message was acknowledged: after a new connection (same session) the broker redelivers
    // nothing it had in flight, so the next message received is the marker published after it.
    const counted = await metricValue(t, 'mqtt_ingest_messages_total');
    (t.app.get(MqttIngestService) as unknown as { client: MqttClient }).client.stream.destroy();
    await until(
      () => Promise.resolve(t.app.get(MqttIngestService).state().connected),
      (up) => !up,
    );
    await subscribed(t);
    await publish(pub, topic, { timestamp: '2025-11-28T12:30:00Z', latitude: 52, longitude: 13 });
    await until(
      () => storedCount(t, device.id),
      (n) => n === 3,
    );
    expect(await metricValue(t, 'mqtt_ingest_messages_total')).toBe(counted + 1);
    const health = await t.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200);
    expect(health.body.test_steps.check_mqtt_ingest).toMatchObject({
      success: true,
      details: { enabled: true, connected: true, subscription: `$share/${prefix}/${prefix}/+/reports` },
    });
  });
});
