import { isAdmin, type AuthUser } from '../common/auth/auth-user.js';
import { raw, sql, type Sql } from '../infrastructure/database/db.js';

/**
 * Which webhooks a caller may see and change, turned into SQL: an admin all, anyone else their
 * own; a caller authenticated with an API key narrowed to clients only webhooks narrowed to a
 * subset of those clients (a webhook without client_ids would send events of every client).
 */
export class WebhookOwner {
  private constructor(
    readonly userId: number,
    readonly admin: boolean,
    /** The API key's clients; null when the caller is not narrowed. */
    readonly keyClientIds: readonly number[] | null,
  ) {}

  static of(user: AuthUser): WebhookOwner {
    return new WebhookOwner(user.id, isAdmin(user), user.apiKey?.clientIds ?? null);
  }

  /** Condition that the webhook aliased `alias` is the caller's to see. */
  visible(alias: string): Sql {
    const w = (column: string) => raw(`${alias}.${column}`);
    const owner = this.admin ? raw('TRUE') : sql`${w('user_id')} = ${this.userId}`;
    if (this.keyClientIds === null) return owner;
    return sql`${owner} AND ${w('client_ids')} IS NOT NULL AND ${w('client_ids')} <@ ${[...this.keyClientIds]}::int[]`;
  }
}
