import sql, { raw, type Sql } from 'sql-template-tag';
import type { AuthUser } from './auth-user.js';
import { isAdmin } from './auth-user.js';

/**
 * What data a caller may see, turned into SQL by repositories.
 * Admin scope is an explicit value, never a missing one. Repositories take the scope as the first
 * argument of every read/write and put `scope.visibleClient(...)` (or `visibleRun`, `visibleTracker`) inside their query, so no method
 * can forget it and nothing is loaded before being filtered.
 *
 * The hierarchy client → brand → run → tracker is walked through production_runs.client_id
 * (kept equal to the brand's client by a trigger), so one indexed column decides visibility.
 */
export class AccessScope {
  private constructor(
    readonly all: boolean,
    readonly clientIds: readonly number[],
    readonly userId: number | null,
  ) {}

  static admin(userId: number | null = null): AccessScope {
    return new AccessScope(true, [], userId);
  }

  static clients(clientIds: readonly number[], userId: number | null = null): AccessScope {
    return new AccessScope(
      false,
      [...new Set(clientIds)].sort((a, b) => a - b),
      userId,
    );
  }

  /**
   * What the caller sees: everything for an admin, else the clients of their client_list — and for
   * a request authenticated with an API key narrowed to `client_ids`, only those of them (for an
   * admin owner: exactly the key's clients). Every repository query is narrowed so, and what the
   * key may not see answers 404 like anything invisible.
   */
  static of(user: AuthUser): AccessScope {
    const narrowed = user.apiKey?.clientIds;
    if (isAdmin(user)) return narrowed ? AccessScope.clients(narrowed, user.id) : AccessScope.admin(user.id);
    return AccessScope.clients(narrowed ? intersect(user.clientIds, narrowed) : user.clientIds, user.id);
  }

  /**
   * Where location reports may be posted: ingest accounts and admins report for the whole fleet,
   * narrowed to the clients of an API key that names some.
   */
  static ingest(user: AuthUser): AccessScope {
    const narrowed = user.apiKey?.clientIds;
    return narrowed ? AccessScope.clients(narrowed, user.id) : AccessScope.admin(user.id);
  }

  /** Condition that the client id in `clientIdColumn` (e.g. `pr.client_id`) is visible. */
  visibleClient(clientIdColumn: string): Sql {
    return this.all ? raw('TRUE') : sql`${raw(clientIdColumn)} = ANY(${this.clientIds}::int[])`;
  }

  /** Condition that the production run in `runIdColumn` is visible. */
  visibleRun(runIdColumn: string): Sql {
    if (this.all) return raw('TRUE');
    return sql`EXISTS (SELECT 1 FROM production_runs scope_pr WHERE scope_pr.id = ${raw(runIdColumn)} AND scope_pr.client_id = ANY(${this.clientIds}::int[]))`;
  }

  /** Condition that the tracker in `trackerIdColumn` is visible. */
  visibleTracker(trackerIdColumn: string): Sql {
    if (this.all) return raw('TRUE');
    return sql`EXISTS (SELECT 1 FROM trackers scope_t JOIN production_runs scope_pr ON scope_pr.id = scope_t.production_run_id
      WHERE scope_t.id = ${raw(trackerIdColumn)} AND scope_pr.client_id = ANY(${this.clientIds}::int[]))`;
  }

  /** Stable identity of the scope for cache keys: callers with equal visibility share entries. */
  get cacheKey(): string {
    return this.all ? 'all' : `c:${this.clientIds.join(',')}`;
  }
}

function intersect(clientIds: readonly number[], keyClientIds: readonly number[]): number[] {
  const allowed = new Set(keyClientIds);
  return clientIds.filter((id) => allowed.has(id));
}
