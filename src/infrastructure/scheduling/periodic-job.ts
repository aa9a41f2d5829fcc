import type { Logger } from '@nestjs/common';

interface PeriodicJobOptions<T> {
  /** Names a run in the warning logged when one fails: `<what> failed: <message>`. */
  what: string;
  logger: Logger;
  /** Pause between the end of one timed run and the start of the next. */
  intervalMs: number;
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
  private running: Promise<T> | null = null;
  private stopRequested = false;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly options: PeriodicJobOptions<T>,
  ) {}

  get stopped(): boolean {
    return this.stopRequested;
  }

  /** The first run after `firstDelayMs`, each next one `intervalMs` after the previous one ended. */
  start(firstDelayMs: number): void {
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
        .finally(() => this.schedule(this.options.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
