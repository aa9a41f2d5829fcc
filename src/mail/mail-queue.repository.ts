import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';
import { OutboxQueue, type OutboxClaim } from '../infrastructure/outbox/outbox-queue.js';
import type { DigestLine } from './mail-digest.renderer.js';

export interface MailRules {
  enabled: boolean;
  statuses: readonly string[];
  /** Kinds of alerts whose openings queue an e-mail. */
  alertKinds: readonly string[];
  digestSeconds: number;
}

export interface ClaimedDigest extends OutboxClaim {
  /** The recipient's address now; null when the user is gone or deactivated. */
  email: string | null;
}

export interface DigestLineRow extends DigestLine {
  digest_id: string;
}

/** Retries stop this long after a message's first attempt; it is then recorded as failed. */
export const RETRY_PERIOD_HOURS = 24;

/**
 * The e-mail queue (mail_digests, an outbox: claims and outcomes through OutboxQueue) and the
 * settings the queueing trigger reads (mail_settings). A row still locked by a committing event
 * (joining its window) is skipped by the claim and left for the next pass.
 */
@Injectable()
export class MailQueueRepository {
  readonly outbox: OutboxQueue<ClaimedDigest>;

  constructor(private readonly db: Db) {
    this.outbox = new OutboxQueue<ClaimedDigest>(db, {
      table: 'mail_digests',
      idType: 'bigint',
      states: { pending: 'queued', done: 'sent', givenUp: 'failed' },
      columns: {
        id: 'id',
        state: 'state',
        dueAt: 'next_attempt_at',
        claimedUntil: 'claimed_until',
        claims: 'claims',
        attempts: 'attempts',
        firstAttemptAt: 'first_attempt_at',
        lastError: 'last_error',
        finishedAt: 'finished_at',
        // The queue's age counts from the end of the digest window, when the e-mail became due.
        readyAt: 'window_end',
      },
      claimReturning: sql`(SELECT u.email FROM users u WHERE u.id = o.user_id AND u.is_active) AS email`,
    });
  }

  async writeRules(rules: MailRules): Promise<void> {
    await this.db.execute(
      sql`INSERT INTO mail_settings AS s (singleton, enabled, statuses, alert_kinds, digest_seconds, updated_at)
          VALUES (true, ${rules.enabled}, ${[...rules.statuses]}::text[], ${[...rules.alertKinds]}::text[], ${rules.digestSeconds}, now())
          ON CONFLICT (singleton) DO UPDATE
            SET enabled = EXCLUDED.enabled, statuses = EXCLUDED.statuses, alert_kinds = EXCLUDED.alert_kinds,
                digest_seconds = EXCLUDED.digest_seconds, updated_at = now()`,
    );
  }

  /** Stops queueing e-mails (the trigger reads `enabled`); what is queued stays queued. */
  async disable(): Promise<void> {
    await this.db.execute(sql`UPDATE mail_settings SET enabled = false, updated_at = now()`);
  }

  /** The status changes and opened alerts each digest lists, in event order, with names as they are now. */
  lines(digestIds: readonly string[]): Promise<DigestLineRow[]> {
    return this.db.rows<DigestLineRow>(
      sql`SELECT de.digest_id::text AS digest_id, e.tracker_name, coalesce(pr.description, '') AS run_description,
                 e.from_status, e.to_status, e.occurred_at, e.alert->>'kind' AS alert_kind,
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
}
