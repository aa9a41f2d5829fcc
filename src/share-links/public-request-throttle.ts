import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { SHARE_LINK_ERRORS } from './share-links.errors.js';

const WINDOW_SECONDS = 60;
const LOCAL_ENTRIES_MAX = 10_000;

/**
 * The per-IP limit of the public routes (the JSON view and the page together; their static assets
 * are not counted): more than PUBLIC_TRACK_REQUESTS_PER_MINUTE requests within a fixed one-minute
 * window (from the IP's first request) answer 429 with `Retry-After` until the window ends. Every
 * request counts, found or not, so guessing tokens costs a minute per few dozen guesses. The count
 * lives in the shared store (Redis when configured), so every instance counts together; without
 * the store each instance counts on its own until it is back.
 */
@Injectable()
export class PublicRequestThrottle {
  private readonly fallback = new Map<string, { count: number; expiresAt: number }>();

  constructor(
    private readonly cache: CacheService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Counts a request from `ip`; throws 429 when it is over the limit. */
  async hit(ip: string): Promise<void> {
    const key = `public-track:ip:${ip}`;
    const state = (await this.cache.increment(key, WINDOW_SECONDS, 1)) ?? this.incrementLocally(key);
    if (state.count > this.config.sharing.publicRequestsPerMinute)
      throw new DomainError(SHARE_LINK_ERRORS.tooManyPublicRequests, {
        headers: { 'Retry-After': String(Math.max(1, state.ttlSeconds)) },
      });
  }

  private incrementLocally(key: string): { count: number; ttlSeconds: number } {
    const now = Date.now();
    if (this.fallback.size >= LOCAL_ENTRIES_MAX)
      for (const [k, entry] of this.fallback) if (entry.expiresAt <= now) this.fallback.delete(k);
    const entry = this.fallback.get(key);
    const live = entry && entry.expiresAt > now ? entry : { count: 0, expiresAt: now + WINDOW_SECONDS * 1000 };
    live.count += 1;
    this.fallback.set(key, live);
    return { count: live.count, ttlSeconds: Math.max(1, Math.ceil((live.expiresAt - now) / 1000)) };
  }
}
