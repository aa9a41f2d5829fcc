import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { LOCATION_WRITES_LOCK_KEY } from '../../src/location-reports/location-writes-lock.js';
import { closeApps, createPeerApp, createTestApp, type TestApp } from '../support/app.js';
import { TestBroker } from '../support/broker.js';
import { databaseUrl } from '../support/database.js';
import { deviceTracker } from '../support/devices.js';
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

const BASE = Date.parse('2025-11-27T00:00:00Z');
const reportAt = (second: number) => ({
  timestamp: new Date(BASE + second * 1000).toISOString(),
  latitude: 50,
  longitude: 8,
});

/** Each test runs against a broker of its own, which it may stop; its queue holds a burst. */
describe('MQTT ingest: bursts, a broker that goes away, two instances', () => {
  const prefix = uniqueMqttPrefix();
  let broker: TestBroker;
  let a: TestApp;
  let b: TestApp | undefined;
  let w: TrackerWorld;
  let pub: MqttClient;

  beforeAll(async () => {
    broker = await TestBroker.start(['max_queued_messages 100000']);
    a = await createTestApp({ env: mqttEnv(prefix, 'a', broker.url) });
    w = await trackerWorld(a);
    await subscribed(a);
    pub = await publisher(broker.url);
  });
  afterAll(async () => {
    await pub?.endAsync();
    await closeApps(b, a);
    await broker?.close();
  });

  it('takes a burst of 10 000 messages in batches (far fewer commits than messages), counting the garbage in it', async () => {
    const device = await deviceTracker(a, w.runA.id);
    const topic = reportTopic(prefix, device.deviceId);
    const nobody = reportTopic(prefix, 'nobody-has-this');
    const [batches, received, before] = [
      await metricValue(a, 'mqtt_ingest_batches_total'),
      await metricValue(a, 'mqtt_ingest_messages_total'),
      await badMessages(a),
    ];
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 5000; i++) {
      sends.push(publish(pub, topic, reportAt(i)));
      sends.push(publish(pub, i % 2 ? nobody : topic, i % 2 ? reportAt(i) : `garbage ${i}`));
    }
    await Promise.all(sends);
    await until(
      () => metricValue(a, 'mqtt_ingest_messages_total'),
      (n) => n === received + 10_000,
      30_000,
    );
    await until(
      () => metricValue(a, 'mqtt_ingest_pending_messages'),
      (n) => n === 0,
      30_000,
    );
    expect(await storedCount(a, device.id)).toBe(5000);
    const after = await badMessages(a);
    expect([after.not_json - before.not_json, after.unknown_device - before.unknown_device]).toEqual([2500, 2500]);
    const commits = (await metricValue(a, 'mqtt_ingest_batches_total')) - batches;
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(1000);
  });

  it('memory stays bounded while the database stalls: the broker stops at the receive window, the subscriber at 20 000 waiting messages; nothing is lost', async () => {
    // A second app with the largest window (65 535), in a group of its own, meets its own bound.
    const widePrefix = uniqueMqttPrefix();
    const wide = await createPeerApp(a, {
      env: { ...mqttEnv(widePrefix, 'wide', broker.url), MQTT_RECEIVE_MAXIMUM: '65535' },
    });
    const [device, wideDevice] = [await deviceTracker(a, w.runA.id), await deviceTracker(a, w.runA.id)];
    const [received, wideReceived] = [
      await metricValue(a, 'mqtt_ingest_messages_total'),
      await metricValue(wide, 'mqtt_ingest_messages_total'),
    ];
    const blocker = new pg.Client({ connectionString: databaseUrl(a.database) });
    try {
      await subscribed(wide);
      await blocker.connect();
      await blocker.query('SELECT pg_advisory_lock($1)', [LOCATION_WRITES_LOCK_KEY]);
      await Promise.all(
        Array.from({ length: 1500 }, (_, i) =>
          publish(pub, reportTopic(prefix, device.deviceId), reportAt(20_000 + i)),
        ),
      );
      for (let from = 0; from < 25_000; from += 5000)
        await Promise.all(
          Array.from({ length: 5000 }, (_, i) =>
            publish(pub, reportTopic(widePrefix, wideDevice.deviceId), reportAt(30_000 + from + i)),
          ),
        );
      await until(
        () => metricValue(wide, 'mqtt_ingest_pending_messages'),
        (n) => n >= 20_000,
        30_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await metricValue(a, 'mqtt_ingest_pending_messages')).toBe(1000);
      expect((await metricValue(a, 'mqtt_ingest_messages_total')) - received).toBe(1000);
      expect(await metricValue(wide, 'mqtt_ingest_pending_messages')).toBe(20_000);
      expect((await metricValue(wide, 'mqtt_ingest_messages_total')) - wideReceived).toBe(20_000);
    } finally {
      await blocker.end();
    }
    try {
      await until(
        () => storedCount(a, device.id),
        (n) => n === 1500,
        30_000,
      );
      await until(
        () => storedCount(a, wideDevice.id),
        (n) => n === 25_000,
        30_000,
      );
      expect((await metricValue(wide, 'mqtt_ingest_messages_total')) - wideReceived).toBe(25_000);
    } finally {
      await wide.close();
    }
  });

  it('reports the lost broker in pipeline health, reconnects when it is back and goes on storing', async () => {
    const device = await deviceTracker(a, w.runA.id);
    const step = async () =>
      (await a.http().get('/api/v1/health/pipeline').set(w.admin.auth).expect(200)).body.test_steps.check_mqtt_ingest;
    await pub.endAsync();
    const reconnects = await metricValue(a, 'mqtt_ingest_reconnects_total');
    await broker.stop();
    const down = await until(step, (s) => s.success === false);
    expect(down.issues[0]).toMatch(
      new RegExp(`^Not subscribed to \\$share/${prefix}/.* at mqtt://127\\.0\\.0\\.1:${broker.port} since `),
    );
    expect(await metricValue(a, 'mqtt_ingest_connected')).toBe(0);
    await broker.start();
    await subscribed(a);
    expect(await metricValue(a, 'mqtt_ingest_reconnects_total')).toBeGreaterThan(reconnects);
    expect(await step()).toMatchObject({ success: true, issues: [] });
    pub = await publisher(broker.url);
    await publish(pub, reportTopic(prefix, device.deviceId), reportAt(1));
    await until(
      () => storedCount(a, device.id),
      (n) => n === 1,
    );
  });

  it('splits a shared subscription between two instances: every report stored once, none lost', async () => {
    b = await createPeerApp(a, { env: mqttEnv(prefix, 'b', broker.url) });
    await subscribed(b);
    const device = await deviceTracker(a, w.runA.id);
    const topic = reportTopic(prefix, device.deviceId);
    const [ra, rb] = [
      await metricValue(a, 'mqtt_ingest_messages_total'),
      await metricValue(b, 'mqtt_ingest_messages_total'),
    ];
    await Promise.all(Array.from({ length: 400 }, (_, i) => publish(pub, topic, reportAt(i))));
    await until(
      () => storedCount(a, device.id),
      (n) => n === 400,
    );
    const [byA, byB] = [
      (await metricValue(a, 'mqtt_ingest_messages_total')) - ra,
      (await metricValue(b, 'mqtt_ingest_messages_total')) - rb,
    ];
    expect(byA + byB).toBe(400);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    const [row] = await a.db.query(
      'SELECT count(*)::int AS n, count(DISTINCT timestamp)::int AS distinct_n FROM location_reports WHERE tracker_id = $1',
      [device.id],
    );
    expect(row).toEqual({ n: 400, distinct_n: 400 });
  });
});
