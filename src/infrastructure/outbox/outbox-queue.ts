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
 * The table needs an index on (dueAt, id) for its pending rows: claims read due rows in that order.
 */
export interface OutboxTable {
  table: string;
  columns: OutboxColumns;
  states: { pending: string; done: string; givenUp: string };
  /** SQL type of the id column (claims carry the id as text). */
  idType: 'bigint' | 'uuid' | 'text';
  /** More output of a claim: select-list items over the claimed row, aliased `o`. */
  claimReturning?: Sql;
  /**
   * A further condition a row must meet to be claimed (and to count as waiting in the queue's age),
   * over the candidate row aliased `q`: e.g. that its recipient is enabled. Rows failing it wait.
   */
  claimWhere?: Sql;
  /**
   * A column that groups rows (e.g. the recipient) for OutboxConsumer's per-group limit: a claim
   * then takes no more rows of a group than the room the caller reports for it (GroupRoom), and
   * each claim carries its group as `group_key`.
   */
  groupBy?: string;
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
  /** The row's group as text, when the table has `groupBy`. */
  group_key?: string;
}

/** How many more rows of each group a claim may take: `limit` per group minus those `busy` with the caller. */
export interface GroupRoom {
  limit: number;
  busy: ReadonlyMap<string, number>;
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
   * transaction is left for the next pass. The claim commits at once. With `groupBy` and `room`,
   * rows of a group beyond its room are left for later (locked only while the statement runs).
   */
  claim(limit: number, leaseSeconds: number, room?: GroupRoom): Promise<Claim[]> {
    const { t, c, spec } = this;
    const extra = spec.claimReturning ? sql`, ${spec.claimReturning}` : empty;
    const where = spec.claimWhere ? sql` AND (${spec.claimWhere})` : empty;
    const due = sql`${c.state} = ${spec.states.pending} AND ${c.dueAt} <= now()
               AND (${c.claimedUntil} IS NULL OR ${c.claimedUntil} < now())${where}`;
    const claimed = (picked: Sql, groupKey: Sql) =>
      this.db.rows<Claim>(
        sql`WITH ${picked}
          UPDATE ${t} o SET ${c.claimedUntil} = now() + make_interval(secs => ${leaseSeconds}),
                 ${c.claims} = o.${c.claims} + 1, ${c.firstAttemptAt} = coalesce(o.${c.firstAttemptAt}, now())
            FROM due WHERE o.${c.id} = due.id
          RETURNING o.${c.id}::text AS id, o.${c.claims} AS claims, o.${c.attempts} AS attempts${groupKey}${extra}`,
      );
    if (!spec.groupBy || !room)
      return claimed(
        sql`due AS (SELECT ${c.id} AS id FROM ${t} q WHERE ${due}
             ORDER BY ${c.dueAt}, ${c.id} LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
        spec.groupBy ? sql`, o.${ident(spec.groupBy)}::text AS group_key` : empty,
      );
    // Groups already at their limit are not even scanned; the others get at most their room.
    const group = ident(spec.groupBy);
    const busy = [...room.busy].filter(([, n]) => n > 0);
    const full = busy.filter(([, n]) => n >= room.limit).map(([key]) => key);
    return claimed(
      sql`candidates AS (
            SELECT ${c.id} AS id, ${c.dueAt} AS due_at, ${group}::text AS group_key FROM ${t} q
             WHERE ${due} AND NOT (${group}::text = ANY(${full}::text[]))
             ORDER BY ${c.dueAt}, ${c.id} LIMIT ${limit * 4} FOR UPDATE SKIP LOCKED
          ), due AS (
            SELECT r.id FROM (
              SELECT k.id, k.due_at, row_number() OVER (PARTITION BY k.group_key ORDER BY k.due_at, k.id) AS rank,
                     ${room.limit} - coalesce(b.n, 0) AS room
                FROM candidates k
                LEFT JOIN unnest(${busy.map(([key]) => key)}::text[], ${busy.map(([, n]) => n)}::int[]) AS b(group_key, n)
                  ON b.group_key = k.group_key) r
             WHERE r.rank <= r.room ORDER BY r.due_at, r.id LIMIT ${limit})`,
      sql`, o.${group}::text AS group_key`,
    );
  }

  /**
   * Records a delivery; false when the claim had lapsed and was taken by another. Each outcome may
   * carry `record`: assignments of the consumer's own columns (e.g. the answer's status), written
   * in the same statement.
   */
  async markDone(claim: OutboxClaim, record?: Sql): Promise<boolean> {
    const { c, spec } = this;
    return (
      (await this.db.execute(
        sql`UPDATE ${this.t} SET ${c.state} = ${spec.states.done}, ${c.finishedAt} = now(), ${c.claimedUntil} = NULL,
                   ${c.attempts} = ${c.attempts} + 1, ${c.lastError} = NULL${more(record)}
             WHERE ${this.owns(claim)}`,
      )) > 0
    );
  }

  /** Records a permanent failure: the row is never tried again. */
  async giveUp(claim: OutboxClaim, reason: string, record?: Sql): Promise<void> {
    const { c, spec } = this;
    await this.db.execute(
      sql`UPDATE ${this.t} SET ${c.state} = ${spec.states.givenUp}, ${c.finishedAt} = now(), ${c.claimedUntil} = NULL,
                 ${c.attempts} = ${c.attempts} + 1, ${c.lastError} = ${reason}${more(record)}
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
    record?: Sql,
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
                 ${c.finishedAt} = CASE WHEN ${giveUp} THEN now() END${more(record)}
           WHERE ${this.owns(claim)}
          RETURNING ${c.state} = ${spec.states.givenUp} AS given_up`,
    );
    return row === null ? null : row.given_up ? 'given-up' : 'retry';
  }

  /** Seconds since the oldest pending row (that meets `claimWhere`) became ready (0 when none). */
  async oldestDueAgeSeconds(): Promise<number> {
    const { c, spec } = this;
    const where = spec.claimWhere ? sql` AND (${spec.claimWhere})` : empty;
    const row = await this.db.one<{ age: number }>(
      sql`SELECT coalesce(extract(epoch FROM now() - min(${c.readyAt})), 0)::float8 AS age
            FROM ${this.t} q WHERE ${c.state} = ${spec.states.pending} AND ${c.readyAt} <= now()${where}`,
    );
    return Math.max(0, row.age);
  }

  /**
   * Takes the table's planner statistics (ANALYZE) when it has never had any, or when more rows
   * changed since than a tenth of its size (at least 1 000); true when it did. Claims read due rows
   * in (dueAt, id) index order only while the statistics know how many rows are pending: right
   * after a burst into a table without them the planner takes the backlog for a handful and sorts
   * all of it on every claim. The consumer asks now and then while it has work, so a burst costs
   * one ANALYZE instead of a sort per claim, whether or not autovacuum runs.
   */
  async refreshStatisticsIfStale(): Promise<boolean> {
    const { stale } = await this.db.one<{ stale: boolean }>(
      sql`SELECT c.reltuples < 0 OR coalesce(s.n_mod_since_analyze > greatest(1000, 0.1 * c.reltuples), false) AS stale
            FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
           WHERE c.oid = ${this.spec.table}::regclass`,
    );
    if (stale) await this.db.execute(sql`ANALYZE ${this.t}`);
    return stale;
  }

  private owns(claim: OutboxClaim): Sql {
    const { c } = this;
    return sql`${c.id} = ${claim.id}::${raw(this.spec.idType)} AND ${c.claims} = ${claim.claims}`;
  }
}

/** The consumer's own assignments (its columns) appended to an outcome's SET list. */
function more(record: Sql | undefined): Sql {
  return record ? sql`, ${record}` : empty;
}

function ident(name: string): Sql {
  return raw(pg.escapeIdentifier(name));
}
