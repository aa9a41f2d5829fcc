import { Injectable } from '@nestjs/common';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** How long a "not revoked" answer may be reused without asking the database. */
const NEGATIVE_TTL_SECONDS = 30;

/**
 * Revoked token ids live in the database (they survive restarts and cache flushes) and are read
 * through the cache. Rows expire with the token they revoke.
 */
@Injectable()
export class RevocationService {
  constructor(
    private readonly db: Db,
    private readonly cache: CacheService,
  ) {}

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.db.execute(sql`INSERT INTO revoked_tokens (jti, expires_at) VALUES (${jti}, ${expiresAt}) ON CONFLICT (jti) DO NOTHING`);
    const ttl = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    await this.cache.set(this.key(jti), '1', ttl);
  }

  /** Atomically revokes; false when it was already revoked (refresh-token reuse). */
  async revokeOnce(jti: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.db.rows(sql`INSERT INTO revoked_tokens (jti, expires_at) VALUES (${jti}, ${expiresAt}) ON CONFLICT (jti) DO NOTHING RETURNING jti`);
    const ttl = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    await this.cache.set(this.key(jti), '1', ttl);
    return rows.length === 1;
  }

  async isRevoked(jti: string): Promise<boolean> {
    const cached = await this.cache.get<string>(this.key(jti));
    if (cached !== undefined) return cached === '1';
    const rows = await this.db.rows(sql`SELECT 1 FROM revoked_tokens WHERE jti = ${jti}`);
    const revoked = rows.length > 0;
    await this.cache.set(this.key(jti), revoked ? '1' : '0', revoked ? 3600 : NEGATIVE_TTL_SECONDS);
    return revoked;
  }

  /** Drops revocations whose token has expired anyway (periodic job). */
  purgeExpired(): Promise<number> {
    return this.db.execute(sql`DELETE FROM revoked_tokens WHERE expires_at < now()`);
  }

  private key(jti: string): string {
    return `revoked:${jti}`;
  }
}
