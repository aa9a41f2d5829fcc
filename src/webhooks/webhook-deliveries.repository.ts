import { Injectable } from '@nestjs/common';
import { Db, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import { OutboxQueue, type OutboxClaim } from '../infrastructure/outbox/outbox-queue.js';
import { notificationEventJson, type NotificationEventRow } from '../notifications/notification-events.port.js';
import { WEBHOOK_TEST_TYPE, type DeliveryStatus } from './dto/webhook-event-types.js';
import type { WebhookOwner } from './webhook-owner.js';

export interface DeliveryRow {
  id: string;
  webhook_id: number;
  event_type: string;
  event_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  response_status: number | null;
  response_time_ms: number | null;
  error: string | null;
}

/** A claimed delivery with what sending it needs: its webhook (URL, sealed secrets) and event, read by the claim itself. */
export interface ClaimedDelivery extends OutboxClaim {
  webhook_id: number;
  event_type: string;
  event_id: string | null;
  created_at: Date;
  /** Null when the webhook was deleted meanwhile. */
  webhook: { url: string; secret: string; previous_secret: string | null; failing_since: string | null } | null;
  /** Null for a test delivery, or when the event was purged. */
  event: NotificationEventRow | null;
}

/** What an attempt found, for the delivery log and the webhook's failure streak. */
export interface AttemptRecord {
  startedAt: Date;
  responseStatus: number | null;
  responseTimeMs: number;
  result: 'succeeded' | 'failed' | 'gone';
  /** Why the webhook is disabled when result is 'gone'. */
  goneReason?: string;
}

/** A webhook disabled by an attempt: 24 h of failures, or a 410 answer. */
export const FAILING_TOO_LONG = 'No successful delivery for 24 hours';
const FAILING_HOURS = 24;

const COLUMNS = sql`d.id::text AS id, d.webhook_id, d.event_type, d.event_id::text AS event_id, d.status, d.attempts,
  d.last_attempt_at, CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
  d.response_status, d.response_time_ms, d.error`;
const FROM = sql`webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id`;

/**
 * The delivery queue (webhook_deliveries, an outbox: claims and outcomes through OutboxQueue) and
 * the delivery log. Only deliveries of an enabled webhook (or retried by hand) whose owner is active
 * are claimed; the others wait. Log reads carry the caller's WebhookOwner condition.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  readonly outbox: OutboxQueue<ClaimedDelivery>;

  constructor(private readonly db: Db) {
    this.outbox = new OutboxQueue<ClaimedDelivery>(db, {
      table: 'webhook_deliveries',
      idType: 'bigint',
      states: { pending: 'pending', done: 'succeeded', givenUp: 'failed' },
      columns: {
        id: 'id',
        state: 'status',
        dueAt: 'next_attempt_at',
        claimedUntil: 'claimed_until',
        claims: 'claims',
        attempts: 'attempts',
        firstAttemptAt: 'first_attempt_at',
        lastError: 'error',
        finishedAt: 'finished_at',
        readyAt: 'next_attempt_at',
      },
      claimWhere: sql`EXISTS (SELECT 1 FROM webhooks cw JOIN users cu ON cu.id = cw.user_id
                               WHERE cw.id = q.webhook_id AND (cw.is_active OR q.manual_retry) AND cu.is_active)`,
      groupBy: 'webhook_id',
      claimReturning: sql`o.webhook_id, o.event_type, o.event_id::text AS event_id, o.created_at,
        (SELECT jsonb_build_object('url', w.url, 'secret', w.secret, 'failing_since', w.failing_since,
                  'previous_secret', CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END)
           FROM webhooks w WHERE w.id = o.webhook_id) AS webhook,
        (SELECT ${notificationEventJson('e')} FROM notification_events e WHERE e.id = o.event_id) AS event`,
    });
  }

  /**
   * The attempt's own columns, written with its outcome by the outbox kit. A manual retry is one
   * attempt: once recorded, the delivery waits with the others while its webhook is disabled.
   */
  attemptColumns(attempt: AttemptRecord): Sql {
    return sql`last_attempt_at = ${attempt.startedAt}, response_status = ${attempt.responseStatus},
               response_time_ms = ${attempt.responseTimeMs}, manual_retry = false`;
  }

  /**
   * The attempt's effect on its webhook, written only when there is one (the claim carries the
   * failure streak's start): a success ends a streak; a failure starts one, and disables the webhook
   * once it has lasted FAILING_HOURS; `gone` disables it at once. Answers whether it was disabled now.
   */
  async webhookAfterAttempt(claim: ClaimedDelivery, attempt: AttemptRecord): Promise<boolean> {
    const since = claim.webhook?.failing_since ?? null;
    const tooLong = sql`coalesce(w.failing_since < now() - make_interval(hours => ${FAILING_HOURS}), false)`;
    let change: Sql;
    if (attempt.result === 'succeeded') {
      if (since === null) return false;
      change = sql`failing_since = NULL`;
    } else if (attempt.result === 'gone') {
      change = sql`is_active = false, disabled_reason = ${attempt.goneReason ?? 'Gone'}, updated_at = now()`;
    } else {
      if (since !== null && Date.now() - new Date(since).getTime() < FAILING_HOURS * 3_600_000) return false;
      change = sql`failing_since = coalesce(w.failing_since, ${attempt.startedAt}),
                   is_active = w.is_active AND NOT ${tooLong},
                   disabled_reason = CASE WHEN w.is_active AND ${tooLong} THEN ${FAILING_TOO_LONG} ELSE w.disabled_reason END,
                   updated_at = CASE WHEN w.is_active AND ${tooLong} THEN now() ELSE w.updated_at END`;
    }
    const row = await this.db.first<{ disabled: boolean }>(
      sql`WITH before AS (SELECT id, is_active FROM webhooks WHERE id = ${claim.webhook_id})
          UPDATE webhooks w SET ${change} FROM before WHERE w.id = before.id
          RETURNING before.is_active AND NOT w.is_active AS disabled`,
    );
    return row?.disabled ?? false;
  }

  list(
    owner: WebhookOwner,
    webhookId: number,
    status: DeliveryStatus | undefined,
    page: { skip: number; limit: number },
  ): Promise<PagedRows<DeliveryRow>> {
    const where = [sql`d.webhook_id = ${webhookId}`, owner.visible('w')];
    if (status !== undefined) where.push(sql`d.status = ${status}`);
    return this.db.page<DeliveryRow>({ columns: COLUMNS, from: FROM, where, orderBy: sql`d.id DESC` }, page);
  }

  /** Queues a `webhook.test` delivery of the webhook, due at once (pg_notify wakes the workers at commit). */
  queueTest(webhookId: number): Promise<DeliveryRow> {
    return this.db.one<DeliveryRow>(
      sql`WITH d AS (
            INSERT INTO webhook_deliveries (webhook_id, event_type) VALUES (${webhookId}, ${WEBHOOK_TEST_TYPE}) RETURNING *
          ), woke AS (SELECT pg_notify('webhook_deliveries', ''))
          SELECT ${COLUMNS} FROM d JOIN webhooks w ON w.id = d.webhook_id, woke`,
    );
  }

  /**
   * Makes a delivery due now whatever its status: pending again with a new retry period, and a new
   * claim counter value, so an attempt in flight records nothing and the next claim sends it again
   * (same id). Marked manual, it is claimed even while the webhook is disabled (its owner must still
   * be active). Null when it is not a delivery of this webhook.
   */
  retryNow(owner: WebhookOwner, webhookId: number, deliveryId: number): Promise<DeliveryRow | null> {
    return this.db.first<DeliveryRow>(
      sql`WITH d AS (
            UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), claimed_until = NULL,
                   claims = d.claims + 1, first_attempt_at = NULL, finished_at = NULL, manual_retry = true
              FROM webhooks w
             WHERE d.id = ${deliveryId} AND d.webhook_id = ${webhookId} AND w.id = d.webhook_id AND ${owner.visible('w')}
            RETURNING d.*
          ), woke AS (SELECT pg_notify('webhook_deliveries', '') FROM (SELECT 1 FROM d LIMIT 1) x)
          SELECT ${COLUMNS} FROM d JOIN webhooks w ON w.id = d.webhook_id LEFT JOIN woke ON true`,
    );
  }
}
