import { connectAsync, type MqttClient } from 'mqtt';
import { MqttIngestService } from '../../src/devices/mqtt-ingest.service.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import type { TestApp } from './app.js';
import { withinBound } from './eventually.js';

/** The broker every machine of the project runs (CI starts it); tests use topics of their own. */
export const BROKER_URL = process.env.MQTT_TEST_URL ?? 'mqtt://127.0.0.1:1883';

let seq = 0;
/** A topic prefix (and group name) no other test, run or process uses. */
export const uniqueMqttPrefix = () => `tps-test-${process.pid}-${Date.now().toString(36)}-${++seq}`;

/** The env of an app subscribing to `<prefix>/+/reports` in its own group, as client `<prefix>-<name>`. */
export function mqttEnv(prefix: string, name = 'a', url = BROKER_URL): Record<string, string> {
  return {
    MQTT_URL: url,
    MQTT_TOPIC: `${prefix}/+/reports`,
    MQTT_GROUP: prefix,
    MQTT_CLIENT_ID: `${prefix}-${name}`,
    MQTT_RECONNECT_MIN_MS: '50',
    MQTT_RECONNECT_MAX_MS: '500',
    // The broker forgets a test's session soon after the test.
    MQTT_SESSION_EXPIRY_SECONDS: '60',
  };
}

export const reportTopic = (prefix: string, deviceId: string) => `${prefix}/${deviceId}/reports`;

/** A test's publishing client. */
export function publisher(url = BROKER_URL): Promise<MqttClient> {
  return connectAsync(url, { clientId: `${uniqueMqttPrefix()}-pub`, reconnectPeriod: 0 });
}

/** Publishes at QoS 1 (resolves once the broker acknowledged it). */
export async function publish(client: MqttClient, topic: string, payload: string | Buffer | object): Promise<void> {
  const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
  await client.publishAsync(topic, body, { qos: 1 });
}

/** Waits until the app's MQTT ingest is subscribed (the broker routes nothing to it before). */
export async function subscribed(t: TestApp, timeoutMs = 10_000): Promise<void> {
  const service = t.app.get(MqttIngestService);
  const state = await withinBound(
    () => Promise.resolve(service.state()),
    (s) => s.connected,
    timeoutMs,
  );
  if (!state.connected) throw new Error(`MQTT ingest not subscribed: ${JSON.stringify(state)}`);
}

/** The value of one series of the app's metrics (0 when absent). */
export async function metricValue(t: TestApp, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await t.app.get(MetricsService).registry.getSingleMetric(name)?.get();
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

/** The count of bad messages by reason, of every reason. */
export async function badMessages(t: TestApp): Promise<Record<string, number>> {
  const metric = await t.app.get(MetricsService).registry.getSingleMetric('mqtt_ingest_bad_messages_total')?.get();
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels.reason), v.value]));
}

/** Reads until `accept` holds, failing with the last reading after `timeoutMs`. */
export async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const value = await withinBound(read, accept, timeoutMs);
  if (!accept(value)) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
  return value;
}

export async function storedCount(t: TestApp, trackerId: number): Promise<number> {
  const [row] = await t.db.query('SELECT count(*)::int AS n FROM location_reports WHERE tracker_id = $1', [trackerId]);
  return row.n as number;
}
