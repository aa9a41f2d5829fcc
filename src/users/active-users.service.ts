import { Injectable } from '@nestjs/common';
import { NEAR_KEYS } from '../infrastructure/cache/cache-invalidation.js';
import { NearCache } from '../infrastructure/cache/near-cache.js';
import { UsersRepository, type ActiveUserRow } from './users.repository.js';
export type { ActiveUserRow };

/** An inactive or missing user, as kept in the in-process tier (a plain `null` could not be cached). */
const NO_USER = false;

/**
 * The active user row every authenticated request checks (roles, client_list, token epoch), read
 * through the in-process cache tier. A database trigger invalidates it on every instance when the
 * row is updated or deleted; the instance making a change drops its copy at once as well
 * (CacheInvalidation.userChanged), so it never answers with the old row.
 */
@Injectable()
export class ActiveUsers {
  constructor(
    private readonly users: UsersRepository,
    private readonly near: NearCache,
  ) {}

  /** The row when the in-process tier holds it (null: inactive or missing), else undefined. */
  cached(id: number): ActiveUserRow | null | undefined {
    const row = this.near.get<ActiveUserRow | typeof NO_USER>(NEAR_KEYS.user(id));
    return row === NO_USER ? null : row;
  }

  async get(id: number): Promise<ActiveUserRow | null> {
    const cached = this.cached(id);
    if (cached !== undefined) return cached;
    const ticket = this.near.ticket();
    const row = await this.users.findActiveById(id);
    this.near.fill(NEAR_KEYS.user(id), row ?? NO_USER, ticket);
    return row;
  }
}
