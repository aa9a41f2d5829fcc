/**
 * How far a streaming replica is behind the primary, measured by WAL position rather than by
 * `now() - pg_last_xact_replay_timestamp()`: that timestamp is the last *replayed commit's*, so on
 * an idle primary it grows without bound although the replica misses nothing.
 *
 * The primary's WAL position (`pg_current_wal_lsn()`) is sampled periodically, each sample tagged
 * with the time its query was sent. A replica whose replay position has reached a sample's position
 * has replayed every transaction that committed before that sample was taken, so its data is at
 * most `now - sample time` old. Lag is therefore an upper bound, exact to one sampling interval;
 * a replica at or past the newest sample is 0 ms behind.
 */

/** A pg_lsn (`16/B374D848`) as a number of bytes; null for SQL NULL. */
export function parseLsn(text: string | null): bigint | null {
  if (text === null) return null;
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

interface Sample {
  at: number;
  lsn: bigint;
}

export class PrimaryWalSamples {
  private readonly samples: Sample[] = [];

  /** Samples older than `horizonMs` are dropped; a replica behind all of them has an unknown lag. */
  constructor(private readonly horizonMs: number) {}

  /** Records the primary's position as read by a query sent at `at` (ms). */
  add(at: number, lsn: bigint): void {
    this.samples.push({ at, lsn });
    // Keep the newest sample older than the horizon: it still bounds the lag of a replica at its position.
    while (this.samples.length > 1 && this.samples[1].at < at - this.horizonMs) this.samples.shift();
  }

  /**
   * Upper bound of the replica's lag (ms) at `now` from its replay position; null when no sample
   * bounds it (no sample yet, or the replica is behind every sample kept).
   */
  lagMs(replayLsn: bigint | null, now: number): number | null {
    if (replayLsn === null || this.samples.length === 0) return null;
    if (replayLsn >= this.samples[this.samples.length - 1].lsn) return 0;
    for (let i = this.samples.length - 1; i >= 0; i -= 1) {
      if (this.samples[i].lsn <= replayLsn) return Math.max(0, now - this.samples[i].at);
    }
    return null;
  }
}
