import type { Logger } from '@nestjs/common';
import { PeriodicJob } from '../scheduling/periodic-job.js';
import type { OutboxMetrics } from './outbox-metrics.js';
import type { GiveUpPolicy, OutboxClaim, OutboxQueue } from './outbox-queue.js';

/**
 * The outbox consumer kit: a transactional outbox (rows written in the transaction of the change
 * they announce) delivered at least once by every instance, off the request path.
 *
 * A consumer supplies its table (OutboxQueue: table, column names, states, extra claim output), a
 * `deliver` callback that makes one delivery and says how it went, optionally a `prepare` callback
 * loading what a batch of claims needs in one query, its retry policy and its metric names.
 *
 * Claims: due rows (pending, `dueAt` passed, no live lease) are claimed in batches with
 * `FOR UPDATE SKIP LOCKED`, each with a lease (`claimedUntil`) and a fencing token (`claims`, bumped
 * per claim) in a statement that commits at once. Instances therefore share the work without
 * taking the same row. `leaseSeconds` must outlast the longest delivery: a lapsed lease makes the
 * row claimable again, so a crash (or a lost database connection) between a delivery and its
 * record means it is delivered again — the only way a row is delivered twice. An outcome is
 * recorded only by the latest claim's holder.
 *
 * Outcomes: `sent` is final. `retry` (also any error thrown by `deliver`) counts an attempt and
 * makes the row due again after an exponential backoff with jitter (backoffDelayMs), unless the
 * give-up policy (attempts and/or time since the first attempt) says enough: then it is given up
 * as `expired`. `give-up` is final at once, with the consumer's own reason label. A pass claims
 * until nothing is due; the passes run on a PeriodicJob (one at a time per process), and stop()
 * waits for the delivery in flight while the rest of the batch's leases lapse.
 */
export type DeliveryOutcome =
  { kind: 'sent' } | { kind: 'retry'; reason: string } | { kind: 'give-up'; reason: string; label: string };

export interface OutboxConsumerOptions<Claim extends OutboxClaim, Batch> {
  queue: OutboxQueue<Claim>;
  /** Names a row in logs: `<what> <id> ...`. */
  what: string;
  logger: Logger;
  pollMs: number;
  batchSize: number;
  leaseSeconds: number;
  retry: GiveUpPolicy & { minMs: number; maxMs: number };
  prepare: (claims: Claim[]) => Promise<Batch>;
  deliver: (claim: Claim, batch: Batch) => Promise<DeliveryOutcome>;
  metrics: OutboxMetrics;
}

export class OutboxConsumer<Claim extends OutboxClaim, Batch> {
  private readonly job: PeriodicJob<number>;

  constructor(private readonly options: OutboxConsumerOptions<Claim, Batch>) {
    this.job = new PeriodicJob(() => this.pass(), {
      what: `${options.what} pass`,
      logger: options.logger,
      intervalMs: options.pollMs,
    });
  }

  /** Passes every `pollMs`, the first one at once. */
  start(): void {
    this.job.start(0);
  }

  /** One pass now (or the one in progress): delivers until nothing is due; answers how many were sent. */
  drain(): Promise<number> {
    return this.job.runNow();
  }

  /** Waits for the delivery in flight; the rest stays claimed until its lease lapses. */
  stop(): Promise<unknown> {
    return this.job.stop();
  }

  private async pass(): Promise<number> {
    const { queue, batchSize, leaseSeconds, metrics } = this.options;
    let sent = 0;
    while (!this.job.stopped) {
      const claims = await queue.claim(batchSize, leaseSeconds);
      if (claims.length === 0) break;
      metrics.claimed(claims.length);
      const batch = await this.options.prepare(claims);
      for (const claim of claims) {
        // Claimed but not tried (stopping): the lease lapses and any instance delivers it later.
        if (this.job.stopped) break;
        if (await this.attempt(claim, batch)) sent++;
      }
    }
    return sent;
  }

  private async attempt(claim: Claim, batch: Batch): Promise<boolean> {
    const { queue, metrics, logger, what } = this.options;
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.options.deliver(claim, batch);
    } catch (error) {
      outcome = { kind: 'retry', reason: (error as Error).message ?? String(error) };
    }
    if (outcome.kind === 'sent') {
      if (!(await queue.markDone(claim))) logger.warn(`${what} ${claim.id} was sent after its claim lapsed`);
      metrics.sent();
      return true;
    }
    if (outcome.kind === 'give-up') {
      await queue.giveUp(claim, outcome.reason);
      metrics.givenUp(outcome.label);
      logger.warn(`${what} ${claim.id} given up (${outcome.label}): ${outcome.reason}`);
      return false;
    }
    const { minMs, maxMs } = this.options.retry;
    const delay = backoffDelayMs(claim.attempts + 1, minMs, maxMs);
    if ((await queue.retryLater(claim, outcome.reason, delay, this.options.retry)) === 'given-up') {
      metrics.givenUp('expired');
      logger.warn(`${what} ${claim.id} given up after the retry period: ${outcome.reason}`);
    } else {
      metrics.retried();
      logger.warn(
        `${what} ${claim.id} not sent (attempt ${claim.attempts + 1}), retrying in ${Math.round(delay / 1000)} s: ${outcome.reason}`,
      );
    }
    return false;
  }
}

/**
 * Delay before retry `attempt` (1 = the first retry): minMs doubled per attempt, at most maxMs,
 * minus up to 10 % jitter so rows that failed together are not retried together.
 */
export function backoffDelayMs(attempt: number, minMs: number, maxMs: number, random = Math.random): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(base * (1 - 0.1 * random()));
}
