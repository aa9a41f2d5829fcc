import { setMaxListeners } from 'node:events';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PgListener } from '../infrastructure/database/pg-listener.js';
import { OutboxConsumer, type DeliveryOutcome } from '../infrastructure/outbox/outbox-consumer.js';
import { toNotificationEventResponse } from '../notifications/notification-events.port.js';
import { WEBHOOK_TEST_TYPE } from './dto/webhook-event-types.js';
import { WebhookDeliveriesRepository, type ClaimedDelivery } from './webhook-deliveries.repository.js';
import { WebhookMetrics, type AttemptResult } from './webhook-metrics.js';
import { signatureOf, WebhookSecrets } from './webhook-secrets.js';
import { DELIVERY_TIMEOUT_MS, send, type SendResult } from './webhook-sender.js';
import { RETRY_PERIOD_HOURS } from './webhooks.repository.js';

/** The channel the queueing trigger (and the test and retry routes) announce new due deliveries on. */
const CHANNEL = 'webhook_deliveries';
/** A claim's lease: longer than any attempt can last (the sender stops at DELIVERY_TIMEOUT_MS), plus room to record it. */
const LEASE_SECONDS = DELIVERY_TIMEOUT_MS / 1000 + 20;

/**
 * Sends webhook deliveries on every instance, off the request path, as a consumer of the outbox kit
 * (claims with SKIP LOCKED and a lease, backoff, giving up after the retry period): up to
 * WEBHOOK_CONCURRENCY attempts at once, at most WEBHOOK_PER_WEBHOOK_CONCURRENCY of them to one
 * webhook, so a slow or hanging receiver holds a few slots for at most 10 s each and never the
 * others. The queueing trigger's pg_notify wakes it (a first attempt within moments of the
 * commit); a poll every WEBHOOK_POLL_MS covers retries coming due and a lost listening connection.
 *
 * A crash (or a lost database connection) between the receiver's answer and its record leaves the
 * delivery claimed; it is sent again, with the same webhook-id, once the lease lapses — receivers
 * deduplicate by webhook-id.
 */
@Injectable()
export class WebhookWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhookWorker.name);
  private readonly consumer: OutboxConsumer<ClaimedDelivery, undefined>;
  private readonly listener: PgListener;
  /** Aborted at shutdown: attempts in flight end at once (recorded as failed, retried later). */
  private readonly stopping = new AbortController();

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly secrets: WebhookSecrets,
    private readonly metrics: WebhookMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const { webhooks } = config;
    // Every attempt in flight listens on the shutdown signal: at most `concurrency` at once.
    setMaxListeners(webhooks.concurrency + 1, this.stopping.signal);
    this.consumer = new OutboxConsumer({
      queue: deliveries.outbox,
      what: 'webhook delivery',
      logger: this.logger,
      pollMs: webhooks.pollMs,
      batchSize: webhooks.concurrency,
      concurrency: webhooks.concurrency,
      perGroupLimit: webhooks.perWebhookConcurrency,
      leaseSeconds: LEASE_SECONDS,
      retry: { minMs: webhooks.retryMinMs, maxMs: webhooks.retryMaxMs, maxAgeSeconds: RETRY_PERIOD_HOURS * 3600 },
      // The claim reads the webhook and the event itself: nothing more to load.
      prepare: async () => undefined,
      deliver: (claim) => this.deliver(claim),
      metrics,
    });
    this.listener = new PgListener({
      connectionString: (config.databaseListenUrl ?? config.databaseUrl) as string,
      applicationName: 'tracker-pipeline-webhooks',
      channels: { [CHANNEL]: () => this.consumer.wake() },
      // Anything announced while the connection was away is picked up by claiming now.
      onUp: () => this.consumer.wake(),
      timeoutMs: 3000,
      heartbeatMs: 5000,
      reconnectMinMs: 250,
      reconnectMaxMs: 5000,
      what: 'webhook listener',
      whileDown: `deliveries are found by polling every ${webhooks.pollMs} ms`,
      warnEveryMs: 60_000,
      logger: this.logger,
    });
  }

  onApplicationBootstrap(): void {
    this.consumer.start();
    void this.listener.start();
  }

  /**
   * Ends the attempts in flight at once (a hanging receiver must not hold the shutdown for 10 s):
   * each is recorded as failed and retried with the same webhook-id; the rest stays queued.
   */
  async onModuleDestroy(): Promise<void> {
    await this.listener.stop();
    this.stopping.abort();
    await this.consumer.stop();
  }

  /** Claims due deliveries now (this instance); the others hear the routes' pg_notify. */
  wake(): void {
    this.consumer.wake();
  }

  /** One pass: sends due deliveries until none is due; returns how many succeeded. */
  drain(): Promise<number> {
    return this.consumer.drain();
  }

  private async deliver(claim: ClaimedDelivery): Promise<DeliveryOutcome> {
    const webhook = claim.webhook;
    // Deleted since the claim: its deliveries went with it, nothing is left to record.
    if (!webhook) return { kind: 'give-up', reason: 'webhook deleted', label: 'webhook_deleted' };
    const body = this.bodyOf(claim);
    if (body === null)
      return { kind: 'give-up', reason: 'the event no longer exists (purged by retention)', label: 'event_gone' };
    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const signatures = [webhook.secret, webhook.previous_secret]
      .filter((sealed): sealed is string => sealed !== null)
      .map((sealed) => signatureOf(this.secrets.open(sealed), claim.id, timestamp, body));
    const result = await send({
      url: webhook.url,
      body,
      refusePrivateTargets: this.config.webhooks.refusePrivateTargets,
      signal: this.stopping.signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'tracker-pipeline-webhooks/1',
        'webhook-id': claim.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatures.join(' '),
      },
    });
    const gone = result.status === 410;
    const attempt = classify(result);
    this.metrics.attempted(attempt);
    const record = {
      startedAt,
      responseStatus: result.status,
      responseTimeMs: result.timeMs,
      result: attempt === 'succeeded' ? ('succeeded' as const) : gone ? ('gone' as const) : ('failed' as const),
      goneReason: `The receiver answered 410 Gone to delivery ${claim.id}`,
    };
    const columns = this.deliveries.attemptColumns(record);
    if (await this.deliveries.webhookAfterAttempt(claim, record))
      this.logger.warn(`webhook ${claim.webhook_id} disabled after delivery ${claim.id}: ${result.error}`);
    if (attempt === 'succeeded') {
      this.metrics.delivered((Date.now() - new Date(claim.created_at).getTime()) / 1000);
      return { kind: 'sent', record: columns };
    }
    if (gone) return { kind: 'give-up', reason: result.error ?? 'HTTP 410', label: 'gone', record: columns };
    return { kind: 'retry', reason: result.error ?? 'failed', record: columns };
  }

  /** The JSON body: the same bytes on every attempt (events never change). Null when the event is gone. */
  private bodyOf(claim: ClaimedDelivery): string | null {
    if (claim.event_type === WEBHOOK_TEST_TYPE)
      return JSON.stringify({
        type: WEBHOOK_TEST_TYPE,
        timestamp: new Date(claim.created_at).toISOString(),
        data: { webhook_id: claim.webhook_id },
      });
    if (claim.event === null) return null;
    const data = toNotificationEventResponse(claim.event);
    return JSON.stringify({ type: claim.event_type, timestamp: data.occurred_at, data });
  }
}

function classify(result: SendResult): AttemptResult {
  if (result.refused) return 'refused';
  if (result.error === null) return 'succeeded';
  if (result.status === 410) return 'gone';
  if (result.status !== null) return 'http_error';
  return result.error.startsWith('no answer') ? 'timeout' : 'network';
}
