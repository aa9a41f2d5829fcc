import { Injectable } from '@nestjs/common';
import { Db, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import { notificationEventJson, type NotificationEventRow } from './notification-events.port.js';

/** A notification joined with its event; ids as text (bigint), timestamps as wire text. */
export interface NotificationRow {
  id: string;
  user_id: number;
  read: boolean;
  created_at: string;
  event: NotificationEventRow;
}

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Select list of a NotificationRow from `notifications n JOIN notification_events e`. */
const COLUMNS = sql`n.id::text AS id, n.user_id, n.read_at IS NOT NULL AS read, ${raw(iso('n.created_at'))} AS created_at,
  ${notificationEventJson('e')} AS event`;
const FROM = sql`notifications n JOIN notification_events e ON e.id = n.event_id`;

/** Whose notifications: a user's, narrowed to the events of some clients (an API key's) or not (null). */
export interface Inbox {
  userId: number;
  clientIds: readonly number[] | null;
}

/** `n.user_id` is the inbox's user and, for a narrowed inbox, the event `n.event_id` is of one of its clients. */
function inInbox(inbox: Inbox): Sql {
  if (inbox.clientIds === null) return sql`n.user_id = ${inbox.userId}`;
  return sql`n.user_id = ${inbox.userId} AND EXISTS (SELECT 1 FROM notification_events scope_e
    WHERE scope_e.id = n.event_id AND scope_e.client_id = ANY(${inbox.clientIds}::int[]))`;
}

/**
 * SQL of the in-app notifications. Every statement is bound to one user (`n.user_id`): a user
 * never reads or marks another user's rows, and such a row answers like a missing one.
 */
@Injectable()
export class NotificationsRepository {
  constructor(private readonly db: Db) {}

  /** The user's notifications newest first; `unread` true/false narrows to unread/read ones. */
  list(
    inbox: Inbox,
    unread: boolean | undefined,
    page: { skip: number; limit: number },
  ): Promise<PagedRows<NotificationRow>> {
    const where: Sql[] = [inInbox(inbox)];
    if (unread === true) where.push(sql`n.read_at IS NULL`);
    if (unread === false) where.push(sql`n.read_at IS NOT NULL`);
    // The total counts notifications alone (index-only on the user's index): every notification has
    // its event, and joining them for the count made it read the heap row by row.
    return this.db.page<NotificationRow>(
      { columns: COLUMNS, from: FROM, countFrom: sql`notifications n`, where, orderBy: sql`n.id DESC` },
      page,
    );
  }

  async unreadCount(inbox: Inbox): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM notifications n WHERE ${inInbox(inbox)} AND n.read_at IS NULL`,
    );
    return row.n;
  }

  /** Marks one of the user's notifications read (already read: unchanged); null when it is not the user's. */
  markRead(inbox: Inbox, id: number): Promise<NotificationRow | null> {
    return this.db
      .first<NotificationRow>(
        sql`WITH marked AS (
            UPDATE notifications n SET read_at = now() WHERE n.id = ${id} AND ${inInbox(inbox)} AND n.read_at IS NULL RETURNING n.id
          )
          SELECT ${COLUMNS}, EXISTS (SELECT 1 FROM marked) AS marked FROM ${FROM} WHERE n.id = ${id} AND ${inInbox(inbox)}`,
      )
      .then((row) => (row ? { ...row, read: true } : null));
  }

  markAllRead(inbox: Inbox): Promise<number> {
    return this.db.execute(
      sql`UPDATE notifications n SET read_at = now() WHERE ${inInbox(inbox)} AND n.read_at IS NULL`,
    );
  }

  /** The inbox's newest notifications with an id above `afterId`, newest first, at most `limit` (bounded replay). */
  newestAfter(inbox: Inbox, afterId: string, limit: number): Promise<NotificationRow[]> {
    return this.db.rows<NotificationRow>(
      sql`SELECT ${COLUMNS} FROM ${FROM} WHERE ${inInbox(inbox)} AND n.id > ${afterId}::bigint ORDER BY n.id DESC LIMIT ${limit}`,
    );
  }

  /** Notifications of any of `userIds` above `afterId`, ascending (live delivery to this instance's streams). */
  afterForUsers(userIds: number[], afterId: string, limit: number): Promise<NotificationRow[]> {
    return this.db.rows<NotificationRow>(
      sql`SELECT ${COLUMNS} FROM ${FROM} WHERE n.user_id = ANY(${userIds}::int[]) AND n.id > ${afterId}::bigint ORDER BY n.id LIMIT ${limit}`,
    );
  }

  /** The greatest notification id (0 when none): a stream without Last-Event-ID starts after it. */
  async lastId(): Promise<string> {
    const row = await this.db.one<{ id: string }>(sql`SELECT coalesce(max(id), 0)::text AS id FROM notifications`);
    return row.id;
  }

  /**
   * Of the given users and token ids: the users that are active, may use notifications and whose
   * token epoch (microseconds) is as returned, and the token ids that are revoked.
   */
  async credentials(
    userIds: number[],
    tokenIds: string[],
  ): Promise<{ users: { id: number; epoch_us: string | null }[]; revoked: string[] }> {
    const [users, revoked] = await Promise.all([
      this.db.rows<{ id: number; epoch_us: string | null }>(
        sql`SELECT id, (extract(epoch FROM tokens_valid_after) * 1000000)::bigint::text AS epoch_us FROM users
             WHERE id = ANY(${userIds}::int[]) AND is_active AND roles && ARRAY['admin','user']::text[]`,
      ),
      this.db.rows<{ jti: string }>(
        sql`SELECT jti::text AS jti FROM revoked_tokens WHERE jti = ANY(${tokenIds}::uuid[])`,
      ),
    ]);
    return { users, revoked: revoked.map((r) => r.jti) };
  }
}
