import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { NEAR_KEYS } from '../infrastructure/cache/cache-invalidation.js';
import { InvalidationBus } from '../infrastructure/cache/invalidation-bus.js';
import { NearCache } from '../infrastructure/cache/near-cache.js';

const WINDOW_SECONDS = 60;
/** Key attempts answered 401 from one IP within the window before every key request from it waits. */
export const MAX_KEY_FAILURES_PER_IP = 20;
const LOCAL_ENTRIES_MAX = 10_000;

export class KeyThrottledException extends DomainError {
  constructor(retryAfterSeconds: number) {
    super(ERRORS.tooManyKeyAttempts, { headers: { 'Retry-After': String(Math.max(1, retryAfterSeconds)) } });
  }
}

/**
 * Throttling of failed API key attempts per IP: once 20 requests with a key were answered 401
 * from an IP within a fixed one-minute window (from its first failure), every request carrying a
 * key from that IP answers 429 with `Retry-After` until the window ends. Requests with a JWT never
 * count nor wait; a 403 (a good key on a route its scope does not cover) is not a failure.
 *
 * The count lives in the shared store (Redis when configured, like the login counters), so every
 * instance counts together. Reading it on every key request would add a Redis round trip that a
 * JWT request does not pay, so the in-process tier remembers that an IP is clear; the instance whose
 * failure brings the count to the limit sends that IP's key on the invalidation bus, and every
 * instance reads the count again on its next key request from it (within the bus's second). A
 * failure's own increment decides its answer, so parallel failures never get more than 20 401s.
 *
 * Store unavailable: counted per instance until it is back (as the login throttle), never an error.
 */
@Injectable()
export class ApiKeyThrottle {
  /** IPs known throttled here, until when (epoch ms). */
  private readonly blocked = new Map<string, number>();
  private readonly fallback = new Map<string, { count: number; expiresAt: number }>();

  constructor(
    private readonly cache: CacheService,
    private readonly near: NearCache,
    private readonly bus: InvalidationBus,
  ) {}

  /** Whether the IP is known, in process, not to be throttled (the synchronous path). */
  knownClear(ip: string): boolean {
    return this.blockedFor(ip) === 0 && this.near.get<boolean>(NEAR_KEYS.apiKeyIpClear(ip)) === true;
  }

  /** Throws KeyThrottledException while the IP is throttled. */
  async check(ip: string): Promise<void> {
    const waitMs = this.blockedFor(ip);
    if (waitMs > 0) throw new KeyThrottledException(Math.ceil(waitMs / 1000));
    if (this.near.get<boolean>(NEAR_KEYS.apiKeyIpClear(ip)) === true) return;
    const ticket = this.near.ticket();
    const { count, ttlSeconds } = await this.cache.counter(counterKey(ip));
    if (count >= MAX_KEY_FAILURES_PER_IP && ttlSeconds > 0) {
      this.block(ip, ttlSeconds);
      throw new KeyThrottledException(ttlSeconds);
    }
    this.near.fill(NEAR_KEYS.apiKeyIpClear(ip), true, ticket);
  }

  /**
   * Counts a key attempt answered 401. Throws KeyThrottledException when the limit was already
   * reached (this attempt then answers 429); the failure that reaches it still answers 401.
   */
  async failed(ip: string): Promise<void> {
    const key = counterKey(ip);
    const state = (await this.cache.increment(key, WINDOW_SECONDS, 1)) ?? this.incrementLocally(key);
    if (state.count < MAX_KEY_FAILURES_PER_IP) return;
    this.block(ip, state.ttlSeconds);
    if (state.count === MAX_KEY_FAILURES_PER_IP) await this.bus.publish([NEAR_KEYS.apiKeyIpClear(ip)]);
    else throw new KeyThrottledException(state.ttlSeconds);
  }

  private blockedFor(ip: string): number {
    const until = this.blocked.get(ip);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left > 0) return left;
    this.blocked.delete(ip);
    return 0;
  }

  private block(ip: string, seconds: number): void {
    if (this.blocked.size >= LOCAL_ENTRIES_MAX) prune(this.blocked, (until) => until);
    this.blocked.set(ip, Date.now() + seconds * 1000);
    this.near.invalidate([NEAR_KEYS.apiKeyIpClear(ip)]);
  }

  private incrementLocally(key: string): { count: number; ttlSeconds: number } {
    const now = Date.now();
    if (this.fallback.size >= LOCAL_ENTRIES_MAX) prune(this.fallback, (entry) => entry.expiresAt);
    const entry = this.fallback.get(key);
    const live = entry && entry.expiresAt > now ? entry : { count: 0, expiresAt: now + WINDOW_SECONDS * 1000 };
    live.count += 1;
    this.fallback.set(key, live);
    return { count: live.count, ttlSeconds: Math.max(1, Math.ceil((live.expiresAt - now) / 1000)) };
  }
}

function counterKey(ip: string): string {
  return `api-key:fail:ip:${ip}`;
}

/** Drops the entries whose time has passed. */
function prune<V>(map: Map<string, V>, expiresAt: (value: V) => number): void {
  const now = Date.now();
  for (const [key, value] of map) if (expiresAt(value) <= now) map.delete(key);
}
