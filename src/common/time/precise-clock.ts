let lastMicros = 0;

/**
 * The wall clock in microseconds since the Unix epoch, strictly increasing within the process
 * (values within one millisecond count up by one): a token issued after a token epoch was taken
 * always carries a later time than the epoch, even within the same millisecond.
 */
export function preciseNowMicros(): number {
  const now = Date.now() * 1000;
  lastMicros = Math.max(now, lastMicros + 1);
  return lastMicros;
}
