import pg from 'pg';
import { Db, empty, raw, sql, type Sql } from '../database/db.js';

/**
 * An outbox table as the kit reads and writes it. Each row is one delivery to make; the kit owns
 * these columns of it (names are the table's own), the consumer owns the rest:
 * - `state`: `pending` while waiting, then `done` or `givenUp` (final);
 * - `dueAt`: earliest time of the next attempt; `claimedUntil`: the lease of the claim in progress;
 * - `claims`: bumped by every claim, the claim's fencing token (an outcome is recorded only by the
 *   holder of the latest claim); `attempts`: finished attempts;
 * - `firstAttemptAt`: set by the first claim (the retry period's start); `lastError`, `finishedAt`;
 * - `readyAt`: since when a row has been waiting (the oldest-due age is measured from it).
 */
export interface OutboxTable {
  table: string;
  columns: OutboxColumns;
  states: { pending: string; done: string; givenUp: string };
  /** SQL type of the id column (claims carry the id as text). */
  idType: 'bigint' | 'uuid' | 'text';
  /** More output of a claim: select-list items over the claimed row, aliased `o`. */
  claimReturning?: Sql;
}

export interface OutboxColumns {
  id: string;
  state: string;
  dueAt: string;
  claimedUntil: string;
  claims: string;
  attempts: string;
  firstAttemptAt: string;
  lastError: string;
  finishedAt: string;
  readyAt: string;
}

/** A claimed row: its id, the claim's fencing token, and the attempts finished before this one. */
export interface OutboxClaim {
  id: string;
  claims: number;
  attempts: number;
}

/** When a temporary failure stops being retried: after this many attempts and/or this long since the first. */
export interface GiveUpPolicy {
  maxAttempts?: number;
  maxAgeSeconds?: number;
}

/** The outbox's SQL: claiming due rows and recording outcomes (see OutboxTable). */
export class OutboxQueue<Claim extends OutboxClaim = OutboxClaim> {
  private readonly t: Sql;
  private readonly c: Record<keyof OutboxColumns, Sql>;

  constructor(
    private readonly db: Db,
    private readonly spec: OutboxTable,
  ) {
    this.t = ident(spec.table);
    this.c = Object.fromEntries(Object.entries(spec.columns).map(([k, v]) => [k, ident(v)])) as typeof this.c;
  }

  /**
   * Claims up to `limit` due rows for `leaseSeconds`, the longest waiting first. SKIP LOCKED:
   * consumers claiming together take different rows, and a row locked by a writer still in its
   * transaction is left for the next pass. The claim commits at once.
   */
  claim(limit: number, leaseSeconds: number): Promise<Claim[]> {
    const { t, c, spec } = this;
    const extra = spec.claimReturning ? sql`, ${spec.claimReturning}` : empty;
    return this.db.rows<Claim>(
      sql`WITH due AS (
            SELECT ${c.id} AS id FROM ${t}
             WHERE ${c.state} = ${spec.states.pending} AND ${c.dueAt} <= now()
               AND (${c.claimedUntil} IS NULL OR ${c.claimedUntil} < now())
             ORDER BY ${c.dueAt}, ${c.id} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          UPDATE ${t} o SET ${c.claimedUntil} = now() + make_interval(secs => ${leaseSeconds}),
                 ${c.claims} = o.${c.claims} + 1, ${c.firstAttemptAt} = coalesce(o.${c.firstAttemptAt}, now())
            FROM due WHERE o.${c.id} = due.id
          RETURNING o.${c.id}::text AS id, o.${c.claims} AS claims, o.${c.attempts} AS attempts${extra}`,
    );
  }

  /** Records a delivery; false when the claim had lapsed and was taken by another. */
  async markDone(claim: OutboxClaim): Promise<boolean> {
    const { c, spec } = this;
    return (
      (await this.db.execute(
        sql`UPDATE ${this.t} SET ${c.state} = ${spec.states.done}, ${c.finishedAt} = now(), ${c.claimedUntil} = NULL,
                   ${c.attempts} = ${c.attempts} + 1, ${c.lastError} = NULL
             WHERE ${this.owns(claim)}`,
      )) > 0
    );
  }

  /** Records a permanent failure: the row is never tried again. */
  async giveUp(claim: OutboxClaim, reason: string): Promise<void> {
    const { c, spec } = this;
    await this.db.execute(
      sql`UPDATE ${this.t} SET ${c.state} = ${spec.states.givenUp}, ${c.finishedAt} = now(), ${c.claimedUntil} = NULL,
                 ${c.attempts} = ${c.attempts} + 1, ${c.lastError} = ${reason}
           WHERE ${this.owns(claim)}`,
    );
  }

  /**
   * Records a temporary failure: due again after `delayMs`, unless `policy` says it has been tried
   * long or often enough (then given up). The resulting state; null when the claim had lapsed.
   */
  async retryLater(
    claim: OutboxClaim,
    reason: string,
    delayMs: number,
    policy: GiveUpPolicy,
  ): Promise<'retry' | 'given-up' | null> {
    const { c, spec } = this;
    const over = [
      policy.maxAgeSeconds === undefined
        ? null
        : sql`${c.firstAttemptAt} < now() - make_interval(secs => ${policy.maxAgeSeconds})`,
      policy.maxAttempts === undefined ? null : sql`${c.attempts} + 1 >= ${policy.maxAttempts}`,
    ].filter((x): x is Sql => x !== null);
    const giveUp = over.length === 0 ? sql`false` : sql`(${over.reduce((a, b) => sql`${a} OR ${b}`)})`;
    const row = await this.db.first<{ given_up: boolean }>(
      sql`UPDATE ${this.t}
             SET ${c.attempts} = ${c.attempts} + 1, ${c.lastError} = ${reason}, ${c.claimedUntil} = NULL,
                 ${c.dueAt} = now() + make_interval(secs => ${delayMs / 1000}),
                 ${c.state} = CASE WHEN ${giveUp} THEN ${spec.states.givenUp} ELSE ${spec.states.pending} END,
                 ${c.finishedAt} = CASE WHEN ${giveUp} THEN now() END
           WHERE ${this.owns(claim)}
          RETURNING ${c.state} = ${spec.states.givenUp} AS given_up`,
    );
    return row === null ? null : row.given_up ? 'given-up' : 'retry';
  }

  /** Seconds since the oldest pending row became ready (0 when none). */
  async oldestDueAgeSeconds(): Promise<number> {
    const { c, spec } = this;
    const row = await this.db.one<{ age: number }>(
      sql`SELECT coalesce(extract(epoch FROM now() - min(${c.readyAt})), 0)::float8 AS age
            FROM ${this.t} WHERE ${c.state} = ${spec.states.pending} AND ${c.readyAt} <= now()`,
    );
    return Math.max(0, row.age);
  }

  private owns(claim: OutboxClaim): Sql {
    const { c } = this;
    return sql`${c.id} = ${claim.id}::${raw(this.spec.idType)} AND ${c.claims} = ${claim.claims}`;
  }
}

function ident(name: string): Sql {
  return raw(pg.escapeIdentifier(name));
}
