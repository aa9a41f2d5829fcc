import { setTimeout as sleep } from 'node:timers/promises';
import { isDataError } from '../infrastructure/database/sql-state.js';
import { MAX_REPORTS_PER_MESSAGE } from './mqtt-messages.js';

/** A received message waiting for its commit: its reports (none for a bad one) and how to acknowledge it. */
export interface PendingMessage {
  deviceId: string;
  reports: unknown[];
  bytes: number;
  ack(): void;
}

export interface MessageBatchesOptions {
  /** Payload bytes, or messages, queued beyond which the receiver waits (whenRoom) before reading the next message. */
  maxQueuedBytes: number;
  maxQueuedMessages: number;
  /** Commits the reports of a batch (one ingest statement); throws when it could not. */
  store(batch: PendingMessage[]): Promise<void>;
  retryMinMs: number;
  retryMaxMs: number;
  /** An attempt failed in a way that may pass (connection loss, conflict, timeout, …): it is retried. */
  onStoreFailed(error: unknown, attempt: number): void;
  /** A message whose reports the database refuses with a data error, alone: it is acknowledged without them. */
  onUnstorable(message: PendingMessage, error: unknown): void;
  onPendingChanged(count: number): void;
}

/** How one attempt at a batch ended. */
type Attempt = { kind: 'stored' } | { kind: 'abandoned' } | { kind: 'refused'; error: unknown };

/** One batch holds at most this many reports: the size of one ingest statement. */
const MAX_REPORTS_PER_BATCH = MAX_REPORTS_PER_MESSAGE;

/**
 * Received messages, committed in batches and acknowledged in the order they arrived, each only
 * after the batch holding it committed. While one batch commits the next one gathers, so batches
 * grow with the load and a quiet subscriber commits each message at once. A batch that fails is
 * retried with backoff and its messages stay unacknowledged, until it commits or `abandon()` (at
 * shutdown) leaves them to the broker, which delivers them again. A data error (isDataError) would
 * fail the same way every time, so instead of being retried the batch is split in halves, each
 * stored on its own, down to the single messages the database refuses: those are handed to
 * `onUnstorable` and acknowledged, everything else is stored. Any other error is retried, since
 * acknowledging a message whose reports were not stored loses them.
 */
export class MessageBatches {
  private readonly queue: PendingMessage[] = [];
  private queuedBytes = 0;
  private inBatch = 0;
  private loop: Promise<void> | null = null;
  private roomWaiters: (() => void)[] = [];
  private abandoned = false;
  private readonly wake = new AbortController();

  constructor(private readonly options: MessageBatchesOptions) {}

  add(message: PendingMessage): void {
    this.queue.push(message);
    this.queuedBytes += message.bytes;
    this.options.onPendingChanged(this.pending);
    if (this.loop === null && !this.abandoned) this.loop = this.run();
  }

  /** Messages received and not yet acknowledged. */
  get pending(): number {
    return this.queue.length + this.inBatch;
  }

  get hasRoom(): boolean {
    return (
      (this.queuedBytes < this.options.maxQueuedBytes && this.pending < this.options.maxQueuedMessages) ||
      this.abandoned
    );
  }

  /** Resolves once the queued payload is below the bound again (or the batches were abandoned). */
  whenRoom(): Promise<void> {
    return this.hasRoom ? Promise.resolve() : new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every message added so far is committed and acknowledged (or abandoned). */
  async idle(): Promise<void> {
    while (this.loop !== null) await this.loop;
  }

  /** Stops retrying: the batch being retried and every queued message stay unacknowledged. */
  abandon(): void {
    this.abandoned = true;
    this.wake.abort();
    this.releaseRoom();
  }

  private async run(): Promise<void> {
    try {
      // The rest of the packets read from the socket with this one join the first batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.queue.length > 0 && !this.abandoned) {
        const batch = this.take();
        const stored = await this.storeIsolating(batch);
        this.inBatch = 0;
        if (stored) for (const message of batch) message.ack();
        for (const message of batch) this.queuedBytes -= message.bytes;
        this.options.onPendingChanged(this.pending);
        this.releaseRoom();
      }
    } finally {
      this.loop = null;
      if (this.abandoned) {
        this.queue.length = 0;
        this.queuedBytes = 0;
        this.options.onPendingChanged(0);
      }
    }
  }

  /** The oldest messages, as many as fit one ingest statement (always at least one). */
  private take(): PendingMessage[] {
    let reports = this.queue[0].reports.length;
    let count = 1;
    while (count < this.queue.length && reports + this.queue[count].reports.length <= MAX_REPORTS_PER_BATCH)
      reports += this.queue[count++].reports.length;
    this.inBatch = count;
    return this.queue.splice(0, count);
  }

  /**
   * Stores the batch, or, when the database refuses it with a data error, each half on its own
   * (k refused messages of n cost about 2k·log2(n) attempts). True when every message is stored or
   * refused, false when abandoned (the halves committed so far are delivered again and deduplicated).
   */
  private async storeIsolating(batch: PendingMessage[]): Promise<boolean> {
    const attempt = await this.storeWithRetry(batch);
    if (attempt.kind !== 'refused') return attempt.kind === 'stored';
    if (batch.length === 1) {
      this.options.onUnstorable(batch[0], attempt.error);
      return true;
    }
    const half = Math.ceil(batch.length / 2);
    return (await this.storeIsolating(batch.slice(0, half))) && (await this.storeIsolating(batch.slice(half)));
  }

  private async storeWithRetry(batch: PendingMessage[]): Promise<Attempt> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.options.store(batch);
        return { kind: 'stored' };
      } catch (error) {
        if (isDataError(error)) return { kind: 'refused', error };
        this.options.onStoreFailed(error, attempt);
        if (this.abandoned) return { kind: 'abandoned' };
        const delay = Math.min(this.options.retryMaxMs, this.options.retryMinMs * 2 ** (attempt - 1));
        await sleep(delay * (0.9 + Math.random() * 0.2), undefined, { signal: this.wake.signal }).catch(
          () => undefined,
        );
        if (this.abandoned) return { kind: 'abandoned' };
      }
    }
  }

  private releaseRoom(): void {
    if (!this.hasRoom) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
