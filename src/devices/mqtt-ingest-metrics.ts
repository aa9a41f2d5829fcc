import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { BAD_MESSAGE_REASONS, type BadMessageReason } from './mqtt-messages.js';

/** Prometheus metrics of MQTT ingest on this instance (its reports also count in ingest_reports_total). */
@Injectable()
export class MqttIngestMetrics {
  private readonly messages: Counter;
  private readonly bad: Counter<'reason'>;
  private readonly batches: Counter;
  private readonly batchFailures: Counter;
  private readonly reconnects: Counter;
  private readonly connected: Gauge;
  private readonly pending: Gauge;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.messages = new Counter({
      name: 'mqtt_ingest_messages_total',
      help: 'MQTT messages received (each is acknowledged once its reports are committed, or at once when it holds none)',
      registers,
    });
    this.bad = new Counter({
      name: 'mqtt_ingest_bad_messages_total',
      help: 'MQTT messages that stored nothing or not all they held, by reason (invalid_reports: its valid reports were stored; unstorable: refused by the database, the rest of its batch stored)',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of BAD_MESSAGE_REASONS) this.bad.inc({ reason }, 0);
    this.batches = new Counter({
      name: 'mqtt_ingest_batches_total',
      help: 'Batches of MQTT messages committed (one ingest statement each)',
      registers,
    });
    this.batchFailures = new Counter({
      name: 'mqtt_ingest_batch_failures_total',
      help: 'Attempts to commit a batch of MQTT messages that failed (retried with backoff, unacknowledged meanwhile)',
      registers,
    });
    this.reconnects = new Counter({
      name: 'mqtt_ingest_reconnects_total',
      help: 'Reconnection attempts to the MQTT broker',
      registers,
    });
    this.connected = new Gauge({
      name: 'mqtt_ingest_connected',
      help: '1 while connected to the MQTT broker and subscribed, else 0 (always 0 without MQTT_URL)',
      registers,
    });
    this.pending = new Gauge({
      name: 'mqtt_ingest_pending_messages',
      help: 'MQTT messages received and not yet acknowledged',
      registers,
    });
  }

  received(): void {
    this.messages.inc();
  }

  badMessage(reason: BadMessageReason): void {
    this.bad.inc({ reason });
  }

  batchCommitted(): void {
    this.batches.inc();
  }

  batchFailed(): void {
    this.batchFailures.inc();
  }

  reconnecting(): void {
    this.reconnects.inc();
  }

  setConnected(connected: boolean): void {
    this.connected.set(connected ? 1 : 0);
  }

  setPending(count: number): void {
    this.pending.set(count);
  }
}
