import type { DatabasePool } from '../../src/infrastructure/database/database-pool.js';
import { withinBound } from './eventually.js';

/**
 * The connections a paused streaming response holds once everything else of its request has
 * finished: read after 300 ms, then again until at most one is checked out (10 s at most). A stream
 * that keeps its cursor open reads 1; one that gave its connection back reads 0; one that held more
 * reads more.
 */
export async function pausedHolding(pool: Pick<DatabasePool, 'stats'>): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return withinBound(
    () => Promise.resolve(pool.stats().checkedOut),
    (held) => held <= 1,
    10_000,
  );
}
