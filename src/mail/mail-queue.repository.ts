import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';
import type { DigestLine } from './mail-digest.renderer.js';

export interface MailRules {
  enabled: boolean;
  statuses: readonly string[];
  digestSeconds: number;
}

export interface ClaimedDigest {
  id: string;
  claims: number;
  attempts: number;
  /** The recipient's address now; null when the user is gone or deactivated. */
  email: string | null;
}

export interface DigestLineRow extends DigestLine {
  digest_id: string;
}

/** Retries stop this long after a message's first attempt; it is then recorded as failed. */
export const RETRY_PERIOD_HOURS = 24;

/** The e-mail queue (mail_digests) and the settings the queueing trigger reads (mail_settings). */
@Injectable()
export class MailQueueRepository {
  constructor(private readonly db: Db) {}

  async writeRules(rules: MailRules): Promise<void> {
    await this.db.execute(
      sql`INSERT INTO mail_settings AS s (singleton, enabled, statuses, digest_seconds, updated_at)
          VALUES (true, ${rules.enabled}, ${[...rules.statuses]}::text[], ${rules.digestSeconds}, now())
          ON CONFLICT (singleton) DO UPDATE
            SET enabled = EXCLUDED.enabled, statuses = EXCLUDED.statuses, digest_seconds = EXCLUDED.digest_seconds, updated_at = now()`,
    );
  }

  /**
   * Claims up to `limit` due messages for `leaseSeconds`, oldest first. SKIP LOCKED: instances
   * claiming together take different rows, and a row still locked by a committing event (joining
   * its window) is left for the next pass. The claim commits at once; `claims` identifies it, so a
   * worker whose lease lapsed cannot record the outcome of a newer claim.
   */
  claim(limit: number, leaseSeconds: number): Promise<ClaimedDigest[]> {
    return this.db.rows<ClaimedDigest>(
      sql`WITH due AS (
            SELECT id FROM mail_digests
             WHERE state = 'queued' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
             ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          UPDATE mail_digests m SET claimed_until = now() + make_interval(secs => ${leaseSeconds}), claims = m.claims + 1,
                 first_attempt_at = coalesce(m.first_attempt_at, now())
            FROM due WHERE m.id = due.id
          RETURNING m.id::text AS id, m.claims, m.attempts,
                    (SELECT u.email FROM users u WHERE u.id = m.user_id AND u.is_active) AS email`,
    );
  }

  /** The status changes each digest lists, in event order, with names as they are now. */
  lines(digestIds: readonly string[]): Promise<DigestLineRow[]> {
    return this.db.rows<DigestLineRow>(
      sql`SELECT de.digest_id::text AS digest_id, e.tracker_name, coalesce(pr.description, '') AS run_description,
                 e.from_status, e.to_status, e.occurred_at,
                 CASE WHEN e.to_status = 'IN_STORAGE' THEN sl.name ELSE dl.name END AS location_name
            FROM mail_digest_events de
            JOIN notification_events e ON e.id = de.event_id
            LEFT JOIN production_runs pr ON pr.id = e.production_run_id
            LEFT JOIN storage_locations sl ON sl.id = e.storage_location_id
            LEFT JOIN delivery_locations dl ON dl.id = e.delivery_location_id
           WHERE de.digest_id = ANY(${[...digestIds]}::bigint[])
           ORDER BY de.digest_id, e.id`,
    );
  }

  async markSent(claim: ClaimedDigest): Promise<boolean> {
    const updated = await this.db.execute(
      sql`UPDATE mail_digests SET state = 'sent', finished_at = now(), claimed_until = NULL, attempts = attempts + 1, last_error = NULL
           WHERE id = ${claim.id}::bigint AND claims = ${claim.claims}`,
    );
    return updated > 0;
  }

  async markFailed(claim: ClaimedDigest, reason: string): Promise<void> {
    await this.db.execute(
      sql`UPDATE mail_digests SET state = 'failed', finished_at = now(), claimed_until = NULL, attempts = attempts + 1, last_error = ${reason}
           WHERE id = ${claim.id}::bigint AND claims = ${claim.claims}`,
    );
  }

  /**
   * A temporary failure: retried after `delayMs`, unless the retry period since the first attempt
   * is over (then failed). Returns the resulting state.
   */
  async markRetry(claim: ClaimedDigest, reason: string, delayMs: number): Promise<'queued' | 'failed' | null> {
    const row = await this.db.first<{ state: 'queued' | 'failed' }>(
      sql`UPDATE mail_digests
             SET attempts = attempts + 1, last_error = ${reason}, claimed_until = NULL,
                 next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}),
                 state = CASE WHEN first_attempt_at < now() - make_interval(hours => ${RETRY_PERIOD_HOURS}) THEN 'failed' ELSE 'queued' END,
                 finished_at = CASE WHEN first_attempt_at < now() - make_interval(hours => ${RETRY_PERIOD_HOURS}) THEN now() END
           WHERE id = ${claim.id}::bigint AND claims = ${claim.claims}
          RETURNING state`,
    );
    return row?.state ?? null;
  }

  /** Seconds since the window end of the oldest message still waiting to be sent (0 when none). */
  async oldestQueuedAgeSeconds(): Promise<number> {
    const row = await this.db.one<{ age: number }>(
      sql`SELECT coalesce(extract(epoch FROM now() - min(window_end)), 0)::float8 AS age
            FROM mail_digests WHERE state = 'queued' AND window_end <= now()`,
    );
    return Math.max(0, row.age);
  }
}
