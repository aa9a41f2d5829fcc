import { afterEach, beforeEach, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { PeriodicJob } from '../../src/infrastructure/scheduling/periodic-job.js';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const logger = new Logger('periodic-job-spec');

describe('PeriodicJob', () => {
  it('answers a call made during a run with that run, then runs again once it ended', async () => {
    const gate = deferred<number>();
    let runs = 0;
    const job = new PeriodicJob(() => (runs++ === 0 ? gate.promise : Promise.resolve(2)), {
      what: 'test run',
      logger,
      intervalMs: 10,
    });
    const first = job.runNow();
    const joined = job.runNow();
    gate.resolve(1);
    expect(await Promise.all([first, joined])).toEqual([1, 1]);
    expect(runs).toBe(1);
    expect(await job.runNow()).toBe(2);
  });

  it('runs on its timer, hands each result on, and stops waiting for the run in progress', async () => {
    const results: number[] = [];
    const stopRun = deferred<number>();
    let runs = 0;
    const job = new PeriodicJob(() => (++runs < 3 ? Promise.resolve(runs) : stopRun.promise), {
      what: 'test run',
      logger,
      intervalMs: 1,
      onResult: (result) => results.push(result),
    });
    job.start(0);
    while (runs < 3) await new Promise((r) => setTimeout(r, 1));
    const stopped = job.stop();
    expect(job.stopped).toBe(true);
    let settled = false;
    void stopped.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(settled).toBe(false);
    stopRun.resolve(3);
    await stopped;
    await new Promise((r) => setTimeout(r, 5));
    expect(results).toEqual([1, 2, 3]);
    expect(runs).toBe(3);
  });

  it('logs a failed timed run and keeps its schedule', async () => {
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    let runs = 0;
    const job = new PeriodicJob(() => (++runs === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(runs)), {
      what: 'test run',
      logger,
      intervalMs: 1,
    });
    job.start(0);
    while (runs < 2) await new Promise((r) => setTimeout(r, 1));
    await job.stop();
    expect(warn).toHaveBeenCalledWith('test run failed: boom');
  });
});

describe('PeriodicJob at a fixed rate', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  /** A job whose runs take `durationMs` (fake time), recording when each started and how many overlapped. */
  function timedJob(durationMs: number, fixedRate: boolean) {
    const starts: number[] = [];
    let active = 0;
    let maxActive = 0;
    const job = new PeriodicJob(
      async () => {
        starts.push(Date.now());
        maxActive = Math.max(maxActive, ++active);
        await new Promise((r) => setTimeout(r, durationMs));
        active--;
        return starts.length;
      },
      { what: 'test run', logger, intervalMs: 100, fixedRate },
    );
    return { job, starts, maxActive: () => maxActive };
  }

  /** Stops the job, letting the run in progress end on the fake clock. */
  async function finish(job: PeriodicJob<number>): Promise<void> {
    const stopped = job.stop();
    await jest.advanceTimersByTimeAsync(1_000);
    await stopped;
  }

  it('starts runs an interval apart, start to start, whatever they take', async () => {
    const { job, starts } = timedJob(30, true);
    job.start(10);
    await jest.advanceTimersByTimeAsync(420);
    await finish(job);
    expect(starts).toEqual([10, 110, 210, 310, 410]);
  });

  it('without it, pauses an interval between the end of a run and the next start', async () => {
    const { job, starts } = timedJob(30, false);
    job.start(10);
    await jest.advanceTimersByTimeAsync(420);
    await finish(job);
    expect(starts).toEqual([10, 140, 270, 400]);
  });

  it('starts the next run at once after one that overran, never two at a time, with no catch-up burst', async () => {
    const { job, starts, maxActive } = timedJob(250, true);
    job.start(0);
    await jest.advanceTimersByTimeAsync(760);
    await finish(job);
    // "At once": a 0 ms timer, which fires after 1 ms.
    expect(starts).toEqual([0, 251, 502, 753]);
    expect(maxActive()).toBe(1);
  });

  it("keeps its rate after an overrun: the next period counts from the late run's due time", async () => {
    let runs = 0;
    const starts: number[] = [];
    const job = new PeriodicJob(
      async () => {
        starts.push(Date.now());
        await new Promise((r) => setTimeout(r, ++runs === 1 ? 150 : 20));
        return runs;
      },
      { what: 'test run', logger, intervalMs: 100, fixedRate: true },
    );
    job.start(0);
    await jest.advanceTimersByTimeAsync(460);
    await finish(job);
    // Due at 150 (it fired at 151), so the next ones are due at 250, 350, …
    expect(starts).toEqual([0, 151, 250, 350, 450]);
  });

  it('a run in progress when the timer fires is joined, not doubled', async () => {
    const { job, starts, maxActive } = timedJob(80, true);
    job.start(50);
    void job.runNow();
    await jest.advanceTimersByTimeAsync(190);
    await finish(job);
    // The manual run (0..80) answered the timer at 50; the next was due at 150.
    expect(starts).toEqual([0, 150]);
    expect(maxActive()).toBe(1);
  });
});
