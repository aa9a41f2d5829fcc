/**
 * Merges concurrent calls for one key within this process: while `work` for a key is running,
 * further calls for that key get the same promise instead of starting it again. The entry goes
 * when the work settles (a rejection reaches every caller waiting on it; the next call starts
 * afresh), so nothing is kept beyond the calls in flight: caching the result is the caller's
 * business (typically `work` reads the cache first and fills it on a miss).
 */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    let flight = this.running.get(key);
    if (!flight) {
      flight = work().finally(() => this.running.delete(key));
      this.running.set(key, flight);
    }
    return flight;
  }

  /** Keys with work in flight (for tests and metrics). */
  get size(): number {
    return this.running.size;
  }
}
