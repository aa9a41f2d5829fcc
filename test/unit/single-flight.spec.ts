import { SingleFlight } from '../../src/infrastructure/cache/single-flight.js';

/** Concurrent calls for one key share one run of the work; the entry goes when it settles. */
describe('SingleFlight', () => {
  /** Work that waits until `release` is called, counting its starts. */
  function gated<T>(value: T) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let starts = 0;
    const work = async () => {
      starts += 1;
      await gate;
      return value;
    };
    return { work, release: () => release(), starts: () => starts };
  }

  it('runs the work once for concurrent calls of one key, separately per key, and again once settled', async () => {
    const flights = new SingleFlight<string>();
    const a = gated('a');
    const b = gated('b');
    const calls = [flights.run('k1', a.work), flights.run('k1', a.work), flights.run('k2', b.work)];
    expect([a.starts(), b.starts(), flights.size]).toEqual([1, 1, 2]);
    a.release();
    b.release();
    expect(await Promise.all(calls)).toEqual(['a', 'a', 'b']);
    expect(flights.size).toBe(0);
    const again = gated('a2');
    const next = flights.run('k1', again.work);
    again.release();
    expect(await next).toBe('a2');
  });

  it('hands a failure to every waiting caller, then starts afresh', async () => {
    const flights = new SingleFlight<number>();
    let starts = 0;
    const failing = async () => {
      starts += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error('read failed');
    };
    const calls = [flights.run('k', failing), flights.run('k', failing)];
    await expect(Promise.all(calls)).rejects.toThrow('read failed');
    await Promise.allSettled(calls);
    expect(starts).toBe(1);
    expect(flights.size).toBe(0);
    await expect(flights.run('k', async () => 7)).resolves.toBe(7);
  });
});
