import { Injectable } from '@nestjs/common';
import { NEAR_KEYS } from '../infrastructure/cache/cache-invalidation.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { InvalidationBus } from '../infrastructure/cache/invalidation-bus.js';
import { NearCache } from '../infrastructure/cache/near-cache.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** How long a "not revoked" answer may be reused from the shared store without asking the database. */
const NEGATIVE_TTL_SECONDS = 30;
/** A revocation heard about on the bus stays in the in-process tier this long (an access token's life is shorter). */
const REVOKED_NEAR_TTL_MS = 24 * 3600 * 1000;

/**
 * Revoked token ids live in the database (they survive restarts and cache flushes) and are read
 * through both cache tiers: this process's (NearCache), then the shared store, then the database.
 * Rows expire with the token they revoke.
 *
 * A revocation reaches every instance through the revoked_tokens trigger (`revoked:<jti>` on the
 * invalidation channel). The message itself is the answer: it is stored as "revoked" rather than
 * dropped, because the shared store may still hold a "not revoked" answer for a moment (the
 * trigger's message is sent at commit, before the revoking instance updates the shared store).
 */
@Injectable()
export class RevocationService {
  constructor(
    private readonly db: Db,
    private readonly cache: CacheService,
    private readonly near: NearCache,
    bus: InvalidationBus,
  ) {
    bus.onMessage((keys) => {
      for (const key of keys) if (key.startsWith('revoked:')) this.near.put(key, true, REVOKED_NEAR_TTL_MS);
    });
  }

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.db.execute(
      sql`INSERT INTO revoked_tokens (jti, expires_at) VALUES (${jti}, ${expiresAt}) ON CONFLICT (jti) DO NOTHING`,
    );
    await this.remember(jti, expiresAt);
  }

  /** Atomically revokes; false when it was already revoked (refresh-token reuse). */
  async revokeOnce(jti: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.db.rows(
      sql`INSERT INTO revoked_tokens (jti, expires_at) VALUES (${jti}, ${expiresAt}) ON CONFLICT (jti) DO NOTHING RETURNING jti`,
    );
    await this.remember(jti, expiresAt);
    return rows.length === 1;
  }

  /** The answer when the in-process tier holds it, else undefined (see isRevoked). */
  cachedIsRevoked(jti: string): boolean | undefined {
    return this.near.get<boolean>(NEAR_KEYS.revoked(jti));
  }

  async isRevoked(jti: string): Promise<boolean> {
    const near = this.cachedIsRevoked(jti);
    if (near !== undefined) return near;
    const ticket = this.near.ticket();
    let revoked: boolean;
    const cached = await this.cache.get<string>(this.key(jti));
    if (cached !== undefined) revoked = cached === '1';
    else {
      const rows = await this.db.rows(sql`SELECT 1 FROM revoked_tokens WHERE jti = ${jti}`);
      revoked = rows.length > 0;
      await this.cache.set(this.key(jti), revoked ? '1' : '0', revoked ? 3600 : NEGATIVE_TTL_SECONDS);
    }
    this.near.fill(NEAR_KEYS.revoked(jti), revoked, ticket);
    return revoked;
  }

  /** Drops revocations whose token has expired anyway (periodic job). */
  purgeExpired(): Promise<number> {
    return this.db.execute(sql`DELETE FROM revoked_tokens WHERE expires_at < now()`);
  }

  private async remember(jti: string, expiresAt: Date): Promise<void> {
    const ttl = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    this.near.put(NEAR_KEYS.revoked(jti), true, ttl * 1000);
    await this.cache.set(this.key(jti), '1', ttl);
  }

  private key(jti: string): string {
    return `revoked:${jti}`;
  }
}
