import { hostname } from 'node:os';

/** The part of the configuration reader mqttConfig uses (app-config.ts's Reader). */
interface ConfigReader {
  readonly problems: string[];
  optional(name: string): string | undefined;
  string(name: string, fallback: string): string;
  int(name: string, fallback: number, min: number, max: number): number;
  url(name: string, protocols: string[]): string | undefined;
}

export interface MqttConfig {
  /** mqtt:// or mqtts://, optional user:pass@; unset: no MQTT ingest. */
  url: string | undefined;
  /** Topic filter with exactly one `+` level: the device id. */
  topic: string;
  /** Shared subscription group: instances of one group split the messages. */
  group: string;
  /**
   * This instance's client id: unique among the instances and the same across its restarts, so
   * that the broker hands the messages it had in flight to this instance when it comes back.
   */
  clientId: string;
  /** How long the broker keeps this instance's session (and its unacknowledged messages) while it is away. */
  sessionExpirySeconds: number;
  /** Messages the broker may have in flight to this instance (MQTT 5 Receive Maximum, advertised). */
  receiveMaximum: number;
  /** A message longer than this is counted (too_large) and acknowledged without being parsed. */
  maxMessageBytes: number;
  /** Reconnect backoff: the first delay, doubled per failed attempt up to the maximum. */
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

const MB = 1024 * 1024;

export function mqttConfig(r: ConfigReader, port: number): MqttConfig {
  const topic = r.string('MQTT_TOPIC', 'trackers/+/reports');
  const levels = topic.split('/');
  if (levels.filter((level) => level === '+').length !== 1 || topic.includes('#') || topic.startsWith('$'))
    r.problems.push('MQTT_TOPIC must be a topic filter with exactly one + level (the device id) and no #');
  const group = r.string('MQTT_GROUP', 'tracker-pipeline');
  if (!/^[^/+#\s]+$/.test(group)) r.problems.push('MQTT_GROUP must not contain / + # or spaces');
  const mqtt: MqttConfig = {
    url: r.url('MQTT_URL', ['mqtt:', 'mqtts:']),
    topic,
    group,
    clientId: r.string('MQTT_CLIENT_ID', `${group}-${hostname()}-${port}`),
    sessionExpirySeconds: r.int('MQTT_SESSION_EXPIRY_SECONDS', 86_400, 0, 4_294_967_295),
    receiveMaximum: r.int('MQTT_RECEIVE_MAXIMUM', 1000, 1, 65_535),
    maxMessageBytes: r.int('MQTT_MAX_MESSAGE_BYTES', 4 * MB, 1024, 256 * MB),
    reconnectMinMs: r.int('MQTT_RECONNECT_MIN_MS', 500, 10, 60_000),
    reconnectMaxMs: r.int('MQTT_RECONNECT_MAX_MS', 30_000, 10, 600_000),
  };
  if (mqtt.reconnectMaxMs < mqtt.reconnectMinMs)
    r.problems.push('MQTT_RECONNECT_MAX_MS must not be below MQTT_RECONNECT_MIN_MS');
  return mqtt;
}
