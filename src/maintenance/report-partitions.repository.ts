import { Injectable } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { isLockNotAvailable } from '../infrastructure/database/sql-state.js';
import { raw, sql, type Sql } from '../infrastructure/database/db.js';

/** One partition of location_reports; `from`/`to` are null for the default partition. */
interface ReportPartition {
  name: string;
  isDefault: boolean;
  from: Date | null;
  to: Date | null;
}

/** How long a partition step waits for a table lock before giving up until the next run. */
const LOCK_TIMEOUT = '2s';

/**
 * SQL of the daily partitions of location_reports (see migration 1763820000000): adding days
 * (`location_reports_add_partition`, which moves the day's rows out of the default partition),
 * dropping a whole day, and the row-level retention path. Like MaintenanceRepository it runs on
 * the job's own connection (the one holding the job's advisory lock).
 */
@Injectable()
export class ReportPartitionsRepository {
  async list(session: QueryRunner): Promise<ReportPartition[]> {
    const rows = await query<{ name: string; is_default: boolean; from: Date | null; to: Date | null }>(
      session,
      sql`SELECT c.relname AS name, b.bound = 'DEFAULT' AS is_default,
                 (regexp_match(b.bound, 'FROM \\(''([^'']*)''\\)'))[1]::timestamptz AS "from",
                 (regexp_match(b.bound, 'TO \\(''([^'']*)''\\)'))[1]::timestamptz AS "to"
            FROM pg_inherits i
            JOIN pg_class c ON c.oid = i.inhrelid
            CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound) b
           WHERE i.inhparent = 'location_reports'::regclass
           ORDER BY 3 NULLS LAST`,
    );
    return rows.map((r) => ({ name: r.name, isDefault: r.is_default, from: r.from, to: r.to }));
  }

  /** UTC days from yesterday to `aheadDays` after today that have no partition yet. */
  async missingDays(session: QueryRunner, aheadDays: number): Promise<string[]> {
    const rows = await query<{ day: string }>(
      session,
      sql`SELECT d::date::text AS day
            FROM generate_series(((now() AT TIME ZONE 'UTC')::date - 1)::timestamp,
                                 ((now() AT TIME ZONE 'UTC')::date + ${aheadDays}::int)::timestamp, interval '1 day') d
           WHERE to_regclass('location_reports_p' || to_char(d, 'YYYYMMDD')) IS NULL
           ORDER BY 1`,
    );
    return rows.map((r) => r.day);
  }

  /** UTC days holding at least `minRows` reports in the default partition (busiest first; scans it). */
  async crowdedDefaultDays(session: QueryRunner, minRows: number, limit: number): Promise<string[]> {
    const rows = await query<{ day: string }>(
      session,
      sql`SELECT (timestamp AT TIME ZONE 'UTC')::date::text AS day FROM location_reports_default
           GROUP BY 1 HAVING count(*) >= ${minRows} ORDER BY count(*) DESC, 1 LIMIT ${limit}`,
    );
    return rows.map((r) => r.day);
  }

  /** Creates the partition of one UTC day ('YYYY-MM-DD'); false when it existed or its locks were busy. */
  async addDay(session: QueryRunner, day: string): Promise<boolean> {
    const [row] = (await inLockTimedTransaction(session, () =>
      query<{ created: boolean }>(session, sql`SELECT location_reports_add_partition(${day}::date) AS created`),
    )) ?? [{ created: false }];
    return row.created;
  }

  /** Oldest and newest receipt time in one partition (two probes of its received_at index). */
  async receivedRange(session: QueryRunner, partition: string): Promise<{ oldest: Date | null; newest: Date | null }> {
    const [row] = await query<{ oldest: Date | null; newest: Date | null }>(
      session,
      sql`SELECT min(received_at) AS oldest, max(received_at) AS newest FROM ${ident(partition)}`,
    );
    return row;
  }

  /**
   * Drops a day's partition if, under the lock the drop needs anyway (ACCESS EXCLUSIVE on
   * location_reports), it still holds no report received at or after `cutoff`: 'kept' when one
   * arrived meanwhile, 'busy' when the lock was not granted within LOCK_TIMEOUT.
   */
  async dropIfAllReceivedBefore(
    session: QueryRunner,
    partition: string,
    cutoff: Date,
  ): Promise<'dropped' | 'kept' | 'busy'> {
    const outcome = await inLockTimedTransaction(session, async () => {
      await query(session, sql`LOCK TABLE location_reports IN ACCESS EXCLUSIVE MODE`);
      const [row] = await query<{ kept: boolean }>(
        session,
        sql`SELECT EXISTS (SELECT 1 FROM ${ident(partition)} WHERE received_at >= ${cutoff}) AS kept`,
      );
      if (row.kept) return 'kept' as const;
      await query(session, sql`DROP TABLE ${ident(partition)}`);
      return 'dropped' as const;
    });
    return outcome ?? 'busy';
  }

  /**
   * Deletes up to `limit` reports of one partition received before `cutoff` (oldest first, on the
   * partition's received_at index). One short statement per batch.
   */
  async deleteReceivedBefore(session: QueryRunner, partition: string, cutoff: Date, limit: number): Promise<number> {
    const result = await run(
      session,
      sql`DELETE FROM ${ident(partition)}
           WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${ident(partition)} WHERE received_at < ${cutoff} ORDER BY received_at LIMIT ${limit}))`,
    );
    return result.affected ?? 0;
  }
}

function ident(name: string): Sql {
  return raw(`"${name.replace(/"/g, '""')}"`);
}

function run(session: QueryRunner, statement: Sql) {
  return session.query(statement.text, statement.values, true);
}

async function query<T>(session: QueryRunner, statement: Sql): Promise<T[]> {
  return (await run(session, statement)).records as T[];
}

/**
 * Runs `work` in a transaction whose lock waits end after LOCK_TIMEOUT: the partition steps take
 * table locks that would otherwise queue ingest behind a long reader. Undefined when a lock was
 * not granted (the next run tries again); other errors are thrown.
 */
async function inLockTimedTransaction<T>(session: QueryRunner, work: () => Promise<T>): Promise<T | undefined> {
  await session.query('BEGIN');
  try {
    await session.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const result = await work();
    await session.query('COMMIT');
    return result;
  } catch (error) {
    await session.query('ROLLBACK');
    if (isLockNotAvailable(error)) return undefined;
    throw error;
  }
}
