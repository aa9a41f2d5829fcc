import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig, MqttConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DeviceReportsService, type DeviceReport } from './device-reports.service.js';
import { MessageBatches, type PendingMessage } from './mqtt-batches.js';
import { MqttIngestMetrics } from './mqtt-ingest-metrics.js';
import { DeviceTopic, parsePayload, type BadMessageReason } from './mqtt-messages.js';

/**
 * Payload bytes, or messages, received and not yet committed beyond which the subscriber stops
 * reading the socket (TCP pushes back to the broker). The bound that holds whatever the broker does
 * with Receive Maximum (Mosquitto 2.0 sends past it once acknowledgements flow).
 */
const MAX_QUEUED_BYTES = 16 * 1024 * 1024;
const MAX_QUEUED_MESSAGES = 20_000;
/** At shutdown: how long the subscriber keeps committing what the broker still sends after the unsubscribe. */
const DRAIN_QUIET_MS = 200;
const DRAIN_DEADLINE_MS = 5_000;
/** Passed to MQTT.js's message callback: go on reading, but send no PUBACK (sent after the commit). */
const ACK_AFTER_COMMIT = new Error('acknowledged after commit');

/** MQTT.js's packet writer, which its own handlers use to acknowledge (no public call acknowledges later). */
interface PacketWriter {
  _sendPacket(
    packet: { cmd: 'puback'; messageId: number; reasonCode: number },
    cb?: () => void,
    cbStorePut?: undefined,
    noStore?: boolean,
  ): void;
}

export interface MqttIngestState {
  enabled: boolean;
  connected: boolean;
  subscription: string | null;
  client_id: string | null;
  broker: string | null;
  last_error: string | null;
  disconnected_since: string | null;
  pending_messages: number;
}

/** The broker's address for logs and health: scheme, host and port, never the credentials. */
export function brokerAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}

/**
 * MQTT ingest: a shared subscription (QoS 1) to the device topics, whose messages go through the
 * device ingest in batches, each message acknowledged only after its reports are committed. The
 * session outlives a connection (clean start off, MQTT_SESSION_EXPIRY_SECONDS), so the messages in
 * flight when a connection or the process dies are delivered again to the same client id, and the
 * ingest's dedup makes the second delivery harmless. Reconnects with exponential backoff.
 */
@Injectable()
export class MqttIngestService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MqttIngestService.name);
  private readonly settings: MqttConfig;
  private readonly topic: DeviceTopic;
  private readonly batches: MessageBatches;
  private client: MqttClient | undefined;
  /** Bumped per connection: an acknowledgement is sent only on the connection its message came on. */
  private connection = 0;
  private subscribed = false;
  private stopping = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failedAttempts = 0;
  private lastError: string | null = null;
  private disconnectedSince: Date | null = new Date();
  /** Messages received so far (the drain at shutdown waits until no new one comes). */
  private received = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reports: DeviceReportsService,
    private readonly metrics: MqttIngestMetrics,
  ) {
    this.settings = config.mqtt;
    this.topic = new DeviceTopic(this.settings.topic);
    this.batches = new MessageBatches({
      maxQueuedBytes: MAX_QUEUED_BYTES,
      maxQueuedMessages: MAX_QUEUED_MESSAGES,
      store: (batch) => this.store(batch),
      retryMinMs: this.settings.reconnectMinMs,
      retryMaxMs: this.settings.reconnectMaxMs,
      onStoreFailed: (error, attempt) => {
        this.metrics.batchFailed();
        this.logger.warn(`Committing MQTT reports failed (attempt ${attempt}), retrying: ${(error as Error).message}`);
      },
      onUnstorable: (message, error) => {
        this.metrics.badMessage('unstorable');
        this.logger.warn(
          `MQTT message of device ${message.deviceId} refused by the database, acknowledged without storing its reports: ${(error as Error).message}`,
        );
      },
      onPendingChanged: (count) => this.metrics.setPending(count),
    });
  }

  get subscription(): string {
    return `$share/${this.settings.group}/${this.settings.topic}`;
  }

  onApplicationBootstrap(): void {
    const url = this.settings.url;
    if (url === undefined) {
      this.logger.log('MQTT ingest is off: MQTT_URL is not set');
      return;
    }
    this.logger.log(`MQTT ingest on: ${this.subscription} as ${this.settings.clientId} at ${brokerAddress(url)}`);
    this.metrics.setConnected(false);
    const client = connect(url, {
      clientId: this.settings.clientId,
      clean: false,
      protocolVersion: 5,
      properties: {
        sessionExpiryInterval: this.settings.sessionExpirySeconds,
        receiveMaximum: this.settings.receiveMaximum,
      },
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      keepalive: 30,
    });
    this.client = client;
    client.handleMessage = (packet, done) => {
      this.receive(packet);
      if (this.batches.hasRoom) done(ACK_AFTER_COMMIT);
      else void this.batches.whenRoom().then(() => done(ACK_AFTER_COMMIT));
    };
    client.on('connect', () => this.connected(client));
    client.on('close', () => this.disconnected());
    client.on('error', (error) => {
      if (this.lastError !== error.message) this.logger.warn(`MQTT broker: ${error.message}`);
      this.lastError = error.message;
    });
  }

  /**
   * Stop consuming (unsubscribe: the group's other members get the new messages), commit and
   * acknowledge what was received, then disconnect. What is still unacknowledged at the deadline
   * stays in this client id's session at the broker.
   */
  async onModuleDestroy(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    const deadline = Date.now() + DRAIN_DEADLINE_MS;
    if (client.connected && this.subscribed)
      await Promise.race([client.unsubscribeAsync(this.subscription).catch(() => undefined), delay(2000)]);
    for (let received = -1; received !== this.received && Date.now() < deadline;) {
      received = this.received;
      await Promise.race([this.batches.idle(), delay(deadline - Date.now())]);
      await delay(DRAIN_QUIET_MS);
    }
    this.batches.abandon();
    await Promise.race([client.endAsync().catch(() => undefined), delay(2000)]);
    client.end(true);
    this.metrics.setConnected(false);
  }

  /** What the pipeline health step reports of this instance. */
  state(): MqttIngestState {
    const url = this.settings.url;
    return {
      enabled: url !== undefined,
      connected: this.subscribed,
      subscription: url === undefined ? null : this.subscription,
      client_id: url === undefined ? null : this.settings.clientId,
      broker: url === undefined ? null : brokerAddress(url),
      last_error: this.lastError,
      disconnected_since: this.subscribed || url === undefined ? null : (this.disconnectedSince?.toISOString() ?? null),
      pending_messages: this.batches.pending,
    };
  }

  private connected(client: MqttClient): void {
    this.connection++;
    this.failedAttempts = 0;
    if (this.stopping) return;
    client.subscribe(this.subscription, { qos: 1 }, (error, granted) => {
      const refused =
        error ?? (granted?.[0] && granted[0].qos > 2 ? new Error('the broker refused the subscription') : null);
      if (refused) {
        this.lastError = `subscribing to ${this.subscription}: ${refused.message}`;
        this.logger.error(`MQTT ingest: ${this.lastError}`);
        return;
      }
      this.subscribed = true;
      this.lastError = null;
      this.disconnectedSince = null;
      this.metrics.setConnected(true);
      this.logger.log(`MQTT ingest subscribed to ${this.subscription}`);
    });
  }

  private disconnected(): void {
    if (this.subscribed && !this.stopping) this.logger.warn('MQTT ingest: connection to the broker lost, reconnecting');
    this.subscribed = false;
    this.disconnectedSince ??= new Date();
    this.metrics.setConnected(false);
    if (this.stopping || this.reconnectTimer !== undefined) return;
    const { reconnectMinMs, reconnectMaxMs } = this.settings;
    const wait = Math.min(reconnectMaxMs, reconnectMinMs * 2 ** this.failedAttempts++);
    this.reconnectTimer = setTimeout(
      () => {
        this.reconnectTimer = undefined;
        if (this.stopping) return;
        this.metrics.reconnecting();
        this.client?.reconnect();
      },
      wait * (0.9 + Math.random() * 0.2),
    );
  }

  private receive(packet: IPublishPacket): void {
    this.received++;
    this.metrics.received();
    const connection = this.connection;
    const ack = () => this.acknowledge(packet, connection);
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    const bad = (reason: BadMessageReason): void => {
      this.metrics.badMessage(reason);
      this.batches.add({ deviceId: '', reports: [], bytes: 0, ack });
    };
    const deviceId = this.topic.deviceId(packet.topic);
    if (deviceId === null) return bad('bad_topic');
    const parsed = parsePayload(payload, this.settings.maxMessageBytes);
    if (parsed.kind === 'bad') return bad(parsed.reason);
    this.batches.add({ deviceId, reports: parsed.reports, bytes: payload.length, ack });
  }

  private acknowledge(packet: IPublishPacket, connection: number): void {
    const client = this.client;
    if (packet.qos === 0 || packet.messageId === undefined || !client?.connected || connection !== this.connection)
      return;
    (client as unknown as PacketWriter)._sendPacket(
      { cmd: 'puback', messageId: packet.messageId, reasonCode: 0 },
      undefined,
      undefined,
      true,
    );
  }

  /** One ingest call for the batch; counts each message whose reports were not all stored, once. */
  private async store(batch: PendingMessage[]): Promise<void> {
    const reports: DeviceReport[] = [];
    const messageOf: number[] = [];
    batch.forEach((message, i) => {
      for (const fields of message.reports) {
        reports.push({ deviceId: message.deviceId, fields });
        messageOf.push(i);
      }
    });
    if (reports.length === 0) return;
    const outcome = await this.reports.ingest(AccessScope.admin(), 'mqtt', reports);
    const bad = new Map<number, BadMessageReason>();
    outcome.problems.forEach((problem, k) => {
      if (problem !== null && !bad.has(messageOf[k]))
        bad.set(messageOf[k], problem.kind === 'unknown_device' ? 'unknown_device' : 'invalid_reports');
    });
    for (const reason of bad.values()) this.metrics.badMessage(reason);
    this.metrics.batchCommitted();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}
