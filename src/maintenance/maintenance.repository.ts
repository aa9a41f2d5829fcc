import { Injectable } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';

/**
 * SQL of the periodic jobs. Everything runs on the one connection that holds the job's
 * session-level advisory lock, so the lock and the work share a session.
 */
@Injectable()
export class MaintenanceRepository {
  async tryLock(runner: QueryRunner, key: number): Promise<boolean> {
    const [row] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [key])) as { locked: boolean }[];
    return row.locked;
  }

  async unlock(runner: QueryRunner, key: number): Promise<void> {
    await runner.query('SELECT pg_advisory_unlock($1)', [key]);
  }

  /**
   * Deletes up to `limit` raw location reports received more than `days` days ago (oldest first,
   * on the received_at index). Aggregates are separate rows and stay. One short statement per
   * batch: no long transaction, no lock held on ingest's rows for long.
   */
  async deleteReportsOlderThan(runner: QueryRunner, days: number, limit: number): Promise<number> {
    // TypeORM answers a DELETE with [rows, rowCount].
    const [, deleted] = (await runner.query(
      `DELETE FROM location_reports
        WHERE id IN (SELECT id FROM location_reports
                      WHERE received_at < now() - make_interval(days => $1)
                      ORDER BY received_at
                      LIMIT $2)`,
      [days, limit],
    )) as [unknown[], number];
    return deleted;
  }
}
