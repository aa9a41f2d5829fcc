import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CacheService } from '../infrastructure/cache/cache.service.js';

/** How long a "not revoked" answer may be reused without asking the database. */
const NEGATIVE_TTL_SECONDS = 30;

/**
 * Revoked token ids live in the database (they survive restarts and cache flushes) and are read
 * through the cache. Rows expire with the token they revoke.
 */
@Injectable()
export class RevocationService {
  constructor(
    private readonly db: DataSource,
    private readonly cache: CacheService,
  ) {}

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.db.query(
      'INSERT INTO revoked_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING',
      [jti, expiresAt],
    );
    const ttl = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    await this.cache.set(this.key(jti), '1', ttl);
  }

  /** Atomically revokes; false when it was already revoked (refresh-token reuse). */
  async revokeOnce(jti: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.db.query<unknown[]>(
      'INSERT INTO revoked_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING RETURNING jti',
      [jti, expiresAt],
    );
    const ttl = Math.max(1, Math.ceil((expiresAt.getTime() - Date.now()) / 1000));
    await this.cache.set(this.key(jti), '1', ttl);
    return rows.length === 1;
  }

  async isRevoked(jti: string): Promise<boolean> {
    const cached = await this.cache.get<string>(this.key(jti));
    if (cached !== undefined) return cached === '1';
    const rows = await this.db.query<unknown[]>('SELECT 1 FROM revoked_tokens WHERE jti = $1', [jti]);
    const revoked = rows.length > 0;
    await this.cache.set(this.key(jti), revoked ? '1' : '0', revoked ? 3600 : NEGATIVE_TTL_SECONDS);
    return revoked;
  }

  /** Drops revocations whose token has expired anyway (periodic job). */
  async purgeExpired(): Promise<number> {
    // TypeORM answers a DELETE with [rows, rowCount].
    const [, purged] = await this.db.query<[unknown[], number]>('DELETE FROM revoked_tokens WHERE expires_at < now()');
    return purged;
  }

  private key(jti: string): string {
    return `revoked:${jti}`;
  }
}
