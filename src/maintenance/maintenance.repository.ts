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

  /** The receipt time before which raw reports are out of retention (database clock). */
  async retentionCutoff(session: QueryRunner, days: number): Promise<Date> {
    const [row] = await rows<{ cutoff: Date }>(session, sql`SELECT now() - make_interval(days => ${days}) AS cutoff`);
    return row.cutoff;
  }

  /**
   * Deletes up to `limit` in-app notifications older than `days` days, and once none is left the
   * events of that age (a notification is never older than its event: both are stamped in the
   * event's transaction). Returns how many notifications were deleted.
   */
  async deleteNotificationsOlderThan(session: QueryRunner, days: number, limit: number): Promise<number> {
    const result = await run(
      session,
      sql`DELETE FROM notifications
        WHERE id IN (SELECT id FROM notifications WHERE created_at < now() - make_interval(days => ${days}) LIMIT ${limit})`,
    );
    const deleted = result.affected ?? 0;
    if (deleted < limit) {
      await run(
        session,
        sql`DELETE FROM notification_events
          WHERE id IN (SELECT id FROM notification_events WHERE created_at < now() - make_interval(days => ${days}) LIMIT ${limit})`,
      );
    }
    return deleted;
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

  /**
   * Deletes up to `limit` webhook deliveries created more than `days` days ago, whatever their
   * status (a delivery still pending then waits on a webhook disabled for longer than that).
   */
  async deleteWebhookDeliveriesOlderThan(session: QueryRunner, days: number, limit: number): Promise<number> {
    const result = await run(
      session,
      sql`DELETE FROM webhook_deliveries
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < now() - make_interval(days => ${days}) LIMIT ${limit})`,
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
