/**
 * Reads until `accept` holds or `boundMs` has passed, and returns the last reading. For what another
 * instance (or a change written directly in SQL) must show within a bound: its in-process cache
 * tier drops old entries when the invalidation reaches it, which the API allows to take up to 1 s.
 */
export async function withinBound<T>(
  read: () => PromiseLike<T>,
  accept: (value: T) => boolean,
  boundMs = 1000,
): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
