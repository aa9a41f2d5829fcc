import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PeriodicJob } from '../infrastructure/scheduling/periodic-job.js';
import { renderDigest } from './mail-digest.renderer.js';
import { MailMetrics } from './mail-metrics.js';
import { MailQueueRepository, type ClaimedDigest, type DigestLineRow } from './mail-queue.repository.js';
import { classifySmtpError, retryDelayMs } from './smtp-outcome.js';
import { sendDeadlineMs, SmtpSender } from './smtp-sender.js';

/** Messages claimed per pass; each is sent one after the other. */
const CLAIM_BATCH = 10;

/**
 * Sends the queued e-mails on every instance, off the request path: claims due messages (each by
 * one instance: SKIP LOCKED and a lease), sends each, and records the outcome only after the
 * server answered. Sent means the server accepted the message. A crash (or a lost database
 * connection) between the server's acceptance and the mark leaves the message claimed; it is sent
 * again once the lease lapses — the only way an e-mail can arrive twice. The lease outlasts the
 * longest possible send, so a slow send is never taken over by another instance.
 */
@Injectable()
export class MailWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MailWorker.name);
  private sender: SmtpSender | undefined;
  private readonly job: PeriodicJob<number>;

  constructor(
    private readonly queue: MailQueueRepository,
    private readonly metrics: MailMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.job = new PeriodicJob(() => this.pass(), {
      what: 'mail pass',
      logger: this.logger,
      intervalMs: config.mail.pollMs,
    });
  }

  onApplicationBootstrap(): void {
    const smtpUrl = this.config.mail.smtpUrl;
    if (smtpUrl === undefined) return;
    this.sender = new SmtpSender({ ...this.config.mail, smtpUrl });
    this.job.start(0);
  }

  /** Waits for the message in flight (bounded by the SMTP timeouts); the rest stays queued. */
  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
    this.sender?.close();
  }

  /** Lease of a claim: longer than any send can take, so no other instance takes over a live send. */
  get leaseSeconds(): number {
    return Math.ceil(sendDeadlineMs(this.config.mail) / 1000) + 30;
  }

  /** One pass: sends due messages until none is due (or the worker stops); returns how many were accepted. */
  drain(): Promise<number> {
    if (!this.sender) return Promise.resolve(0);
    return this.job.runNow();
  }

  private async pass(): Promise<number> {
    let accepted = 0;
    while (!this.job.stopped) {
      const claims = await this.queue.claim(CLAIM_BATCH, this.leaseSeconds);
      if (claims.length === 0) break;
      const lines = await this.queue.lines(claims.map((c) => c.id));
      for (const claim of claims) {
        // Claimed but not tried (stopping): the lease lapses and any instance sends it later.
        if (this.job.stopped) break;
        if (
          await this.deliver(
            claim,
            lines.filter((line) => line.digest_id === claim.id),
          )
        )
          accepted++;
      }
    }
    return accepted;
  }

  private async deliver(claim: ClaimedDigest, lines: DigestLineRow[]): Promise<boolean> {
    if (claim.email === null) {
      await this.queue.markFailed(claim, 'recipient deactivated or removed');
      this.metrics.recordFailed('recipient_inactive');
      return false;
    }
    try {
      await (this.sender as SmtpSender).send(claim.email, renderDigest(lines));
    } catch (error) {
      await this.recordFailure(claim, error);
      return false;
    }
    if (!(await this.queue.markSent(claim))) this.logger.warn(`e-mail ${claim.id} was sent after its claim lapsed`);
    this.metrics.recordSent();
    return true;
  }

  private async recordFailure(claim: ClaimedDigest, error: unknown): Promise<void> {
    const failure = classifySmtpError(error);
    if (failure.kind === 'permanent') {
      await this.queue.markFailed(claim, failure.reason);
      this.metrics.recordFailed('refused');
      this.logger.warn(`e-mail ${claim.id} refused permanently: ${failure.reason}`);
      return;
    }
    const delay = retryDelayMs(claim.attempts + 1, this.config.mail.retryMinMs, this.config.mail.retryMaxMs);
    const state = await this.queue.markRetry(claim, failure.reason, delay);
    if (state === 'failed') {
      this.metrics.recordFailed('expired');
      this.logger.warn(`e-mail ${claim.id} given up after the retry period: ${failure.reason}`);
    } else {
      this.metrics.recordRetry();
      this.logger.warn(
        `e-mail ${claim.id} not sent (attempt ${claim.attempts + 1}), retrying in ${Math.round(delay / 1000)} s: ${failure.reason}`,
      );
    }
  }
}
