import type { Logger } from '@nestjs/common';
import type { Sql } from '../database/db.js';
import { PeriodicJob } from '../scheduling/periodic-job.js';
import type { OutboxMetrics } from './outbox-metrics.js';
import type { GiveUpPolicy, GroupRoom, OutboxClaim, OutboxQueue } from './outbox-queue.js';

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
 * as `expired`. `give-up` is final at once, with the consumer's own reason label.
 *
 * Concurrency: at most `concurrency` deliveries are in flight at once (default 1: one after the
 * other, a batch claimed only when the previous one is done). With more, a free slot is filled by a
 * new claim at once, so one slow delivery holds one slot and never the others; with the queue's
 * `groupBy` and `perGroupLimit`, no group (e.g. one receiver) holds more than that many slots, so
 * a hanging receiver cannot starve the rest. A pass claims until nothing is due and nothing is in
 * flight; wake() makes a running pass claim again at once (a new row was announced). The passes run
 * on a PeriodicJob (one at a time per process), and stop() waits for the deliveries in flight while
 * the leases of claims not yet tried lapse.
 */
export type DeliveryOutcome = (
  { kind: 'sent' } | { kind: 'retry'; reason: string } | { kind: 'give-up'; reason: string; label: string }
) & {
  /** Assignments of the consumer's own columns, written with the outcome (same statement). */
  record?: Sql;
};

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
  /** Deliveries in flight at once (default 1). At most batchSize. */
  concurrency?: number;
  /** With the queue's `groupBy`: deliveries of one group in flight at once. */
  perGroupLimit?: number;
}

interface Waiting<Claim, Batch> {
  claim: Claim;
  batch: Batch;
}

/** How often a consumer with work looks at its table's planner statistics. */
const STATISTICS_CHECK_MS = 30_000;

export class OutboxConsumer<Claim extends OutboxClaim, Batch> {
  private readonly job: PeriodicJob<number>;
  /** Resolves the wait of a running pass (wake()). */
  private nudge: (() => void) | null = null;
  private nudged = false;
  private statisticsCheck: Promise<unknown> | null = null;
  private statisticsCheckedAt = 0;

  constructor(private readonly options: OutboxConsumerOptions<Claim, Batch>) {
    if ((options.concurrency ?? 1) > options.batchSize) throw new Error('concurrency must not exceed batchSize');
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

  /** One pass now (or the one in progress, told to claim again): delivers until nothing is due; answers how many were sent. */
  drain(): Promise<number> {
    this.wake();
    return this.job.runNow();
  }

  /** Something became due: a running pass claims again at once; otherwise a pass starts. */
  wake(): void {
    if (this.job.stopped) return;
    this.nudged = true;
    if (this.nudge) this.nudge();
    else void this.job.runNow().catch(() => undefined);
  }

  /** Waits for the deliveries in flight; claims not yet tried stay claimed until their lease lapses. */
  stop(): Promise<unknown> {
    this.nudge?.();
    return this.job.stop();
  }

  private async pass(): Promise<number> {
    const { queue, batchSize, leaseSeconds, metrics, logger, what } = this.options;
    const concurrency = this.options.concurrency ?? 1;
    const running = new Set<Promise<void>>();
    const busy = new Map<string, number>();
    const room: GroupRoom | undefined =
      this.options.perGroupLimit === undefined ? undefined : { limit: this.options.perGroupLimit, busy };
    const waiting: Waiting<Claim, Batch>[] = [];
    let sent = 0;
    // After a delivery ends, claim again only once a quarter of the slots is free (fewer, larger
    // claims under load); after a wake-up or the poll interval, for any free slot.
    const claimAt = Math.max(1, Math.floor(concurrency / 4));
    let woken = true;
    this.nudged = false;
    while (!this.job.stopped) {
      while (waiting.length > 0 && running.size < concurrency && !this.job.stopped) {
        const { claim, batch } = waiting.shift()!;
        const task: Promise<void> = this.attempt(claim, batch)
          .then((wasSent) => void (wasSent && sent++))
          .catch((error: unknown) =>
            logger.warn(`${what} ${claim.id}: outcome not recorded: ${(error as Error).message}`),
          )
          .finally(() => {
            running.delete(task);
            if (claim.group_key !== undefined) busy.set(claim.group_key, (busy.get(claim.group_key) ?? 1) - 1);
          });
        running.add(task);
      }
      if (this.job.stopped) break;
      if (waiting.length === 0 && running.size < concurrency && (woken || concurrency - running.size >= claimAt)) {
        const claims = await queue.claim(batchSize - running.size, leaseSeconds, room);
        woken = false;
        if (claims.length > 0) {
          this.refreshStatistics();
          metrics.claimed(claims.length);
          for (const { group_key: key } of claims) if (key !== undefined) busy.set(key, (busy.get(key) ?? 0) + 1);
          const batch = await this.options.prepare(claims);
          waiting.push(...claims.map((claim) => ({ claim, batch })));
          continue;
        }
      }
      if (running.size === 0) {
        if (!this.nudged) break;
        this.nudged = false;
        woken = true;
        continue;
      }
      // Every slot busy: wait for one. Otherwise also for a wake-up or the poll interval (retries
      // coming due), so a slow delivery never holds back what else is due.
      woken = await this.settleOne(running, running.size < concurrency);
    }
    // Claimed but not tried (stopping): the lease lapses and any instance delivers it later.
    await Promise.all(running);
    await this.statisticsCheck;
    return sent;
  }

  /**
   * While there is work, at most every STATISTICS_CHECK_MS and never two at once, the queue's table
   * gets fresh planner statistics when it needs them (OutboxQueue.refreshStatisticsIfStale), off the
   * delivery path: a failure only logs.
   */
  private refreshStatistics(): void {
    const now = Date.now();
    if (this.statisticsCheck || now - this.statisticsCheckedAt < STATISTICS_CHECK_MS) return;
    this.statisticsCheckedAt = now;
    this.statisticsCheck = this.options.queue
      .refreshStatisticsIfStale()
      .catch((error: unknown) =>
        this.options.logger.warn(`${this.options.what}: statistics not refreshed: ${(error as Error).message}`),
      )
      .finally(() => (this.statisticsCheck = null));
  }

  /** Waits for a delivery to end or, with `orWake`, for a wake-up or the poll interval; true for the latter. */
  private async settleOne(running: Set<Promise<void>>, orWake: boolean): Promise<boolean> {
    if (!orWake) {
      await Promise.race(running);
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        ...[...running].map((task) => task.then(() => false)),
        new Promise<boolean>((resolve) => {
          this.nudge = () => resolve(true);
          if (this.nudged) resolve(true);
          timer = setTimeout(() => resolve(true), this.options.pollMs);
        }),
      ]);
    } finally {
      this.nudge = null;
      this.nudged = false;
      clearTimeout(timer);
    }
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
      if (!(await queue.markDone(claim, outcome.record)))
        logger.warn(`${what} ${claim.id} was sent after its claim lapsed`);
      metrics.sent();
      return true;
    }
    if (outcome.kind === 'give-up') {
      await queue.giveUp(claim, outcome.reason, outcome.record);
      metrics.givenUp(outcome.label);
      logger.warn(`${what} ${claim.id} given up (${outcome.label}): ${outcome.reason}`);
      return false;
    }
    const { minMs, maxMs } = this.options.retry;
    const delay = backoffDelayMs(claim.attempts + 1, minMs, maxMs);
    if ((await queue.retryLater(claim, outcome.reason, delay, this.options.retry, outcome.record)) === 'given-up') {
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
