import { jest } from '@jest/globals';
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
