import { Injectable } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { sql, type Sql } from '../infrastructure/database/db.js';

/**
 * SQL of the periodic jobs. Everything runs on the one connection that holds the job's
 * session-level advisory lock, so the lock and the work share a session: these statements take
 * that connection (a QueryRunner the service holds for the run), not a pooled one per statement.
 */
@Injectable()
export class MaintenanceRepository {
  async tryLock(session: QueryRunner, key: number): Promise<boolean> {
    const [row] = await rows<{ locked: boolean }>(session, sql`SELECT pg_try_advisory_lock(${key}) AS locked`);
    return row.locked;
  }

  async unlock(session: QueryRunner, key: number): Promise<void> {
    await run(session, sql`SELECT pg_advisory_unlock(${key})`);
  }

  /**
   * Deletes up to `limit` raw location reports received more than `days` days ago (oldest first,
   * on the received_at index). Aggregates are separate rows and stay. One short statement per
   * batch: no long transaction, no lock held on ingest's rows for long.
   */
  async deleteReportsOlderThan(session: QueryRunner, days: number, limit: number): Promise<number> {
    const result = await run(
      session,
      sql`DELETE FROM location_reports
        WHERE id IN (SELECT id FROM location_reports
                      WHERE received_at < now() - make_interval(days => ${days})
                      ORDER BY received_at
                      LIMIT ${limit})`,
    );
    return result.affected ?? 0;
  }

  /** Deletes up to `limit` sent or failed e-mails finished more than `days` days ago (queued ones always stay). */
  async deleteFinishedMailOlderThan(session: QueryRunner, days: number, limit: number): Promise<number> {
    const result = await run(
      session,
      sql`DELETE FROM mail_digests
        WHERE id IN (SELECT id FROM mail_digests
                      WHERE state <> 'queued' AND finished_at < now() - make_interval(days => ${days})
                      ORDER BY finished_at
                      LIMIT ${limit})`,
    );
    return result.affected ?? 0;
  }
}

function run(session: QueryRunner, statement: Sql) {
  return session.query(statement.text, statement.values, true);
}

async function rows<T>(session: QueryRunner, statement: Sql): Promise<T[]> {
  return (await run(session, statement)).records as T[];
}
