import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { OutboxConsumer, type DeliveryOutcome } from '../infrastructure/outbox/outbox-consumer.js';
import { renderDigest } from './mail-digest.renderer.js';
import { MailMetrics } from './mail-metrics.js';
import {
  MailQueueRepository,
  RETRY_PERIOD_HOURS,
  type ClaimedDigest,
  type DigestLineRow,
} from './mail-queue.repository.js';
import { classifySmtpError } from './smtp-outcome.js';
import { sendDeadlineMs, SmtpSender } from './smtp-sender.js';

/** Messages claimed per pass; each is sent one after the other. */
const CLAIM_BATCH = 10;

/**
 * Sends the queued e-mails on every instance, off the request path, as a consumer of the outbox
 * kit (OutboxConsumer: claims with SKIP LOCKED and a lease, retries with backoff, gives up after
 * the retry period). Sent means the SMTP server accepted the message, recorded only after it
 * answered. A crash (or a lost database connection) between the server's acceptance and the mark
 * leaves the message claimed; it is sent again once the lease lapses — the only way an e-mail can
 * arrive twice. The lease outlasts the longest possible send, so a slow send is never taken over
 * by another instance.
 */
@Injectable()
export class MailWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MailWorker.name);
  private sender: SmtpSender | undefined;
  private readonly consumer: OutboxConsumer<ClaimedDigest, DigestLineRow[]>;

  constructor(
    queue: MailQueueRepository,
    metrics: MailMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.consumer = new OutboxConsumer({
      queue: queue.outbox,
      what: 'e-mail',
      logger: this.logger,
      pollMs: config.mail.pollMs,
      batchSize: CLAIM_BATCH,
      leaseSeconds: this.leaseSeconds,
      retry: {
        minMs: config.mail.retryMinMs,
        maxMs: config.mail.retryMaxMs,
        maxAgeSeconds: RETRY_PERIOD_HOURS * 3600,
      },
      prepare: (claims) => queue.lines(claims.map((c) => c.id)),
      deliver: (claim, lines) =>
        this.send(
          claim,
          lines.filter((line) => line.digest_id === claim.id),
        ),
      metrics,
    });
  }

  onApplicationBootstrap(): void {
    const smtpUrl = this.config.mail.smtpUrl;
    if (smtpUrl === undefined) return;
    this.sender = new SmtpSender({ ...this.config.mail, smtpUrl });
    this.consumer.start();
  }

  /** Waits for the message in flight (bounded by the SMTP timeouts); the rest stays queued. */
  async onModuleDestroy(): Promise<void> {
    await this.consumer.stop();
    this.sender?.close();
  }

  /** Lease of a claim: longer than any send can take, so no other instance takes over a live send. */
  get leaseSeconds(): number {
    return Math.ceil(sendDeadlineMs(this.config.mail) / 1000) + 30;
  }

  /** One pass: sends due messages until none is due (or the worker stops); returns how many were accepted. */
  drain(): Promise<number> {
    if (!this.sender) return Promise.resolve(0);
    return this.consumer.drain();
  }

  private async send(claim: ClaimedDigest, lines: DigestLineRow[]): Promise<DeliveryOutcome> {
    if (claim.email === null)
      return { kind: 'give-up', reason: 'recipient deactivated or removed', label: 'recipient_inactive' };
    try {
      await (this.sender as SmtpSender).send(claim.email, renderDigest(lines));
      return { kind: 'sent' };
    } catch (error) {
      const failure = classifySmtpError(error);
      return failure.kind === 'permanent'
        ? { kind: 'give-up', reason: failure.reason, label: 'refused' }
        : { kind: 'retry', reason: failure.reason };
    }
  }
}
