import type { Logger } from '@nestjs/common';

interface PeriodicJobOptions<T> {
  /** Names a run in the warning logged when one fails: `<what> failed: <message>`. */
  what: string;
  logger: Logger;
  /** Pause between the end of one timed run and the start of the next (see `fixedRate`). */
  intervalMs: number;
  /**
   * Start to start instead: each timed run is due `intervalMs` after the previous one was due, so
   * the run's own duration does not stretch the period. A run that overruns its period is followed
   * by the next at once (never two at a time, and no burst to catch up on missed periods).
   */
  fixedRate?: boolean;
  /** Sees the result of every timed run (callers of runNow get theirs directly). */
  onResult?: (result: T) => void;
}

/**
 * A job each instance runs on its own timer. One run at a time per process: a call while a run is
 * in progress answers that run. The timer never keeps the process alive; stop() cancels it and
 * waits for the run in progress, whose work should end early once `stopped` is true.
 */
export class PeriodicJob<T> {
  private timer: NodeJS.Timeout | undefined;
  /** fixedRate: when the next timed run is due (epoch ms). */
  private dueAt = 0;
  private running: Promise<T> | null = null;
  private stopRequested = false;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly options: PeriodicJobOptions<T>,
  ) {}

  get stopped(): boolean {
    return this.stopRequested;
  }

  /**
   * The first run after `firstDelayMs`, each next one `intervalMs` after the previous one ended (with
   * `fixedRate`: after the previous one was due, or at once when that moment has passed).
   */
  start(firstDelayMs: number): void {
    this.dueAt = Date.now() + firstDelayMs;
    this.schedule(firstDelayMs);
  }

  /** Runs `work` (the job's own by default) now, unless a run is in progress: that run's result answers then. */
  runNow(work: () => Promise<T> = this.work): Promise<T> {
    this.running ??= work().finally(() => (this.running = null));
    return this.running;
  }

  stop(): Promise<unknown> {
    this.stopRequested = true;
    clearTimeout(this.timer);
    return this.running?.catch(() => undefined) ?? Promise.resolve();
  }

  private schedule(delayMs: number): void {
    if (this.stopRequested) return;
    this.timer = setTimeout(() => {
      void this.runNow()
        .then((result) => this.options.onResult?.(result))
        .catch((error: unknown) => this.options.logger.warn(`${this.options.what} failed: ${(error as Error).message}`))
        .finally(() => this.schedule(this.nextDelay()));
    }, delayMs);
    this.timer.unref();
  }

  private nextDelay(): number {
    const { intervalMs, fixedRate } = this.options;
    if (!fixedRate) return intervalMs;
    const now = Date.now();
    this.dueAt = Math.max(this.dueAt + intervalMs, now);
    return this.dueAt - now;
  }
}
