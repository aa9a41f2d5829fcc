import { Injectable } from '@nestjs/common';
import { AccessScope } from '../common/auth/access-scope.js';
import { Db, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { WebhookOwner } from './webhook-owner.js';

export interface WebhookRow {
  id: number;
  user_id: number;
  url: string;
  event_types: string[];
  client_ids: number[] | null;
  description: string | null;
  is_active: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewWebhook {
  userId: number;
  url: string;
  eventTypes: readonly string[];
  clientIds: readonly number[] | null;
  description: string | null;
  /** The signing secret as stored (sealed). */
  secret: string;
}

export interface WebhookChanges {
  url?: string;
  eventTypes?: readonly string[];
  /** null clears it. */
  description?: string | null;
  isActive?: boolean;
}

const COLUMNS = sql`w.id, w.user_id, w.url, w.event_types, w.client_ids, w.description, w.is_active, w.disabled_reason,
  w.created_at, w.updated_at`;

/** Retries stop this long after a delivery's first attempt; re-enabling a webhook fails those past it. */
export const RETRY_PERIOD_HOURS = 24;
/** The previous secret keeps signing this long after a rotation. */
const PREVIOUS_SECRET_HOURS = 24;

/**
 * SQL of the webhook subscriptions. Every statement that reads or changes a webhook carries the
 * caller's WebhookOwner condition, so someone else's webhook answers like a missing one.
 */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: Db) {}

  insert(webhook: NewWebhook): Promise<WebhookRow> {
    return this.db.one<WebhookRow>(
      sql`INSERT INTO webhooks AS w (user_id, url, event_types, client_ids, description, secret)
          VALUES (${webhook.userId}, ${webhook.url}, ${[...webhook.eventTypes]}::text[],
                  ${webhook.clientIds === null ? null : [...webhook.clientIds]}::int[], ${webhook.description}, ${webhook.secret})
          RETURNING ${COLUMNS}`,
    );
  }

  list(owner: WebhookOwner, page: { skip: number; limit: number }): Promise<PagedRows<WebhookRow>> {
    return this.db.page<WebhookRow>(
      { columns: COLUMNS, from: sql`webhooks w`, where: [owner.visible('w')], orderBy: sql`w.id` },
      page,
    );
  }

  /** The webhook when the caller may see it; `lock` holds it for the caller's transaction. */
  find(owner: WebhookOwner, id: number, lock = false): Promise<WebhookRow | null> {
    return this.db.first<WebhookRow>(
      sql`SELECT ${COLUMNS} FROM webhooks w WHERE w.id = ${id} AND ${owner.visible('w')}${lock ? sql` FOR UPDATE` : sql``}`,
    );
  }

  /**
   * Applies the changes. Enabling a disabled webhook clears its disabled_reason and failure
   * streak; disabling it through the API records so.
   */
  update(owner: WebhookOwner, id: number, changes: WebhookChanges): Promise<WebhookRow | null> {
    const set: Sql[] = [sql`updated_at = now()`];
    if (changes.url !== undefined) set.push(sql`url = ${changes.url}`);
    if (changes.eventTypes !== undefined) set.push(sql`event_types = ${[...changes.eventTypes]}::text[]`);
    if (changes.description !== undefined) set.push(sql`description = ${changes.description}`);
    if (changes.isActive === true)
      set.push(
        sql`disabled_reason = CASE WHEN w.is_active THEN w.disabled_reason END`,
        sql`failing_since = CASE WHEN w.is_active THEN w.failing_since END`,
        sql`is_active = true`,
      );
    if (changes.isActive === false)
      set.push(
        sql`disabled_reason = CASE WHEN w.is_active THEN 'Disabled through the API' ELSE w.disabled_reason END`,
        sql`is_active = false`,
      );
    return this.db.first<WebhookRow>(
      sql`UPDATE webhooks w SET ${joinSet(set)} WHERE w.id = ${id} AND ${owner.visible('w')} RETURNING ${COLUMNS}`,
    );
  }

  /**
   * After a webhook was enabled again: its pending deliveries past the retry period fail, the
   * others are due at once (pg_notify wakes the workers at commit).
   */
  async resumeDeliveries(webhookId: number): Promise<void> {
    await this.db.execute(
      sql`WITH expired AS (
            UPDATE webhook_deliveries SET status = 'failed', finished_at = now(), claimed_until = NULL,
                   error = concat_ws(' / ', error, 'retry period ended while the webhook was disabled')
             WHERE webhook_id = ${webhookId} AND status = 'pending'
               AND coalesce(first_attempt_at, created_at) < now() - make_interval(hours => ${RETRY_PERIOD_HOURS})
          ), resumed AS (
            UPDATE webhook_deliveries SET next_attempt_at = least(next_attempt_at, now())
             WHERE webhook_id = ${webhookId} AND status = 'pending'
               AND coalesce(first_attempt_at, created_at) >= now() - make_interval(hours => ${RETRY_PERIOD_HOURS})
            RETURNING 1
          )
          SELECT pg_notify('webhook_deliveries', '') FROM (SELECT 1 FROM resumed LIMIT 1) r`,
    );
  }

  /** Deletes the webhook and (cascade) its deliveries; the deleted row, or null. */
  delete(owner: WebhookOwner, id: number): Promise<WebhookRow | null> {
    return this.db.first<WebhookRow>(
      sql`DELETE FROM webhooks w WHERE w.id = ${id} AND ${owner.visible('w')} RETURNING ${COLUMNS}`,
    );
  }

  /** A new secret; the current one keeps signing beside it for PREVIOUS_SECRET_HOURS. */
  rotate(owner: WebhookOwner, id: number, sealed: string): Promise<WebhookRow | null> {
    return this.db.first<WebhookRow>(
      sql`UPDATE webhooks w SET previous_secret = w.secret, secret = ${sealed},
                 previous_secret_until = now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS}), updated_at = now()
           WHERE w.id = ${id} AND ${owner.visible('w')} RETURNING ${COLUMNS}`,
    );
  }

  /** Of `ids`, those naming an existing client that `scope` can see. */
  async visibleClients(scope: AccessScope, ids: readonly number[]): Promise<number[]> {
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT c.id FROM clients c WHERE c.id = ANY(${[...ids]}::int[]) AND ${scope.visibleClient('c.id')}`,
    );
    return rows.map((row) => row.id);
  }
}

function joinSet(parts: Sql[]): Sql {
  return parts.reduce((all, part) => sql`${all}, ${part}`);
}
