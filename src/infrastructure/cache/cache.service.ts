import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { CACHE_MANAGER } from '@nestjs/cache-manager';
import type { Cache } from 'cache-manager';
import { createHash, randomUUID } from 'node:crypto';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { REDIS_CLIENT, type RedisConnection } from './redis-client.js';

/** Longest a request ever waits on the cache store before carrying on without it. */
const CACHE_OP_TIMEOUT_MS = 250;
/**
 * Counters (login throttling) wait longer: a timed-out increment may still land in Redis while the
 * attempt is counted in memory instead, so under load a short timeout would let a burst be
 * counted twice over. A login already spends far longer on its password hash.
 */
const COUNTER_OP_TIMEOUT_MS = 2000;
/** After a failure, skip the store for this long so a dead Redis costs nothing per request. */
const BREAKER_OPEN_MS = 1000;

class CacheTimeout extends Error {}

/**
 * The one cache API of the service (get/set/del, counters, generation-based invalidation).
 * It never throws into a request and never waits more than CACHE_OP_TIMEOUT_MS (counters:
 * COUNTER_OP_TIMEOUT_MS): on any store
 * failure reads are misses and writes are skipped.
 *
 * Key scheme: `<CACHE_PREFIX>:<area>:...` (callers pass the part after the prefix). Invalidation
 * bumps a generation token per area (`gen:<area>`);
 * keys embed the current generations, so every instance sharing Redis sees a change at once.
 */
@Injectable()
export class CacheService implements OnModuleDestroy {
  private readonly logger = new Logger(CacheService.name);
  /** 0 while the store is trusted; after a failure, until when it is skipped (then half-open). */
  private breakerOpenUntil = 0;
  private trialRunning = false;
  private readonly memoryCounters = new Map<string, { value: number; expiresAt: number }>();
  /** Running totals read by the metrics module: `get` hits and misses, and store failures (timeouts, errors). */
  readonly stats = { hits: 0, misses: 0, errors: 0 };

  private readonly prefix: string;

  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    @Inject(REDIS_CLIENT) private readonly redis: RedisConnection | null,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prefix = config.cachePrefix;
  }

  private k(key: string): string {
    return `${this.prefix}:${key}`;
  }

  get storeKind(): 'redis' | 'memory' {
    return this.redis ? 'redis' : 'memory';
  }

  async get<T>(key: string): Promise<T | undefined> {
    const value = (await this.guard(() => this.cache.get<T>(this.k(key)), undefined)) ?? undefined;
    if (value === undefined) this.stats.misses += 1;
    else this.stats.hits += 1;
    return value;
  }

  async set<T>(key: string, value: T, ttlSeconds: number): Promise<void> {
    await this.guard(() => this.cache.set(this.k(key), value, ttlSeconds * 1000), undefined);
  }

  /**
   * A value that is already serialized (a large JSON text), stored as it is: no JSON round trip
   * and, given bytes, no re-encoding. Same failure rules as get/set (a miss, a skipped write).
   */
  async getText(key: string): Promise<string | undefined> {
    const redis = this.redis;
    const value = redis
      ? await this.guard(() => redis.get(this.k(key)), null)
      : await this.guard(() => this.cache.get<string>(this.k(key)), undefined);
    if (typeof value !== 'string') {
      this.stats.misses += 1;
      return undefined;
    }
    this.stats.hits += 1;
    return value;
  }

  async setText(key: string, value: string | Buffer, ttlSeconds: number): Promise<void> {
    const redis = this.redis;
    if (redis) await this.guard(() => redis.set(this.k(key), value, { PX: ttlSeconds * 1000 }), undefined);
    else await this.guard(() => this.cache.set(this.k(key), value.toString(), ttlSeconds * 1000), undefined);
  }

  async del(key: string): Promise<void> {
    await this.guard(() => this.cache.del(this.k(key)), undefined);
  }

  /** Current generation tokens of the given areas (missing ones are created lazily as '0'). */
  async generations(areas: string[]): Promise<string[]> {
    // Without the store we cannot know the generation: a random one guarantees a miss, never stale data.
    return (await this.sharedGenerations(areas)) ?? areas.map(() => `x${randomUUID()}`);
  }

  /** The generation tokens as the store holds them, or null when it cannot answer. */
  async sharedGenerations(areas: string[]): Promise<string[] | null> {
    const values = await this.guard(() => this.cache.mget<string>(areas.map((a) => this.k(`gen:${a}`))), null);
    return values === null ? null : values.map((v) => v ?? '0');
  }

  /** Invalidates everything cached under the areas, on every instance sharing the store. */
  async bump(...areas: string[]): Promise<void> {
    await this.guard(() => Promise.all(areas.map((a) => this.cache.set(this.k(`gen:${a}`), randomUUID()))), undefined);
  }

  /**
   * Builds a cache key `<area>:<generations>:<hash of parts>`; `parts` must already be
   * normalized (sorted keys, defaults applied) by the caller.
   */
  async key(area: string, dependsOn: string[], parts: unknown): Promise<string> {
    const gens = await this.generations(dependsOn);
    const digest = createHash('sha1').update(JSON.stringify(parts)).digest('base64url');
    return `${area}:${gens.join('.')}:${digest}`;
  }

  /**
   * Atomic counter with a window (login throttling), changed by `by` (a negative step hands a
   * count back). Returns the new count and the seconds left in the window, or null when the store
   * is unavailable (callers decide how to degrade).
   */
  async increment(
    relativeKey: string,
    windowSeconds: number,
    by = 1,
  ): Promise<{ count: number; ttlSeconds: number } | null> {
    const key = this.k(relativeKey);
    if (!this.redis) {
      const now = Date.now();
      const entry = this.memoryCounters.get(key);
      const live = entry && entry.expiresAt > now ? entry : { value: 0, expiresAt: now + windowSeconds * 1000 };
      live.value += by;
      this.memoryCounters.set(key, live);
      return { count: live.value, ttlSeconds: Math.ceil((live.expiresAt - now) / 1000) };
    }
    const redis = this.redis;
    return this.guard(
      async () => {
        const [count, ttl] = (await redis
          .multi()
          .incrBy(key, by)
          .expire(key, windowSeconds, 'NX')
          .ttl(key)
          .exec()) as unknown as [number, number, number];
        return { count: Number(count), ttlSeconds: Math.max(1, Number(ttl)) };
      },
      null,
      COUNTER_OP_TIMEOUT_MS,
    );
  }

  async counter(relativeKey: string): Promise<{ count: number; ttlSeconds: number }> {
    const key = this.k(relativeKey);
    if (!this.redis) {
      const entry = this.memoryCounters.get(key);
      const now = Date.now();
      if (!entry || entry.expiresAt <= now) return { count: 0, ttlSeconds: 0 };
      return { count: entry.value, ttlSeconds: Math.ceil((entry.expiresAt - now) / 1000) };
    }
    const redis = this.redis;
    return this.guard(
      async () => {
        const [count, ttl] = (await redis.multi().get(key).ttl(key).exec()) as unknown as [string | null, number];
        return { count: Number(count ?? 0), ttlSeconds: Math.max(0, Number(ttl)) };
      },
      { count: 0, ttlSeconds: 0 },
      COUNTER_OP_TIMEOUT_MS,
    );
  }

  async resetCounter(relativeKey: string): Promise<void> {
    const key = this.k(relativeKey);
    if (!this.redis) {
      this.memoryCounters.delete(key);
      return;
    }
    const redis = this.redis;
    await this.guard(() => redis.del(key), undefined);
  }

  /** Set/get/delete round trip used by the health check; throws on failure. */
  async ping(timeoutMs: number): Promise<void> {
    const key = this.k(`health:${randomUUID()}`);
    await withTimeout(
      (async () => {
        await this.cache.set(key, 'ok', 10_000);
        const value = await this.cache.get<string>(key);
        await this.cache.del(key);
        if (value !== 'ok') throw new Error('cache store did not return the value it stored');
      })(),
      timeoutMs,
    );
    if (this.redis && !this.redis.isReady) throw new Error('Redis is not connected');
  }

  private async guard<T, F>(operation: () => Promise<T>, fallback: F, timeoutMs = CACHE_OP_TIMEOUT_MS): Promise<T | F> {
    if (this.redis && (Date.now() < this.breakerOpenUntil || !this.redis.isReady)) return fallback;
    // Half-open after a failure: one operation tries the store while the others carry on without
    // it, so a store that accepts but never answers costs one 250 ms wait per second, not one per request.
    const trial = this.breakerOpenUntil > 0;
    if (trial) {
      if (this.trialRunning) return fallback;
      this.trialRunning = true;
    }
    try {
      const result = await withTimeout(operation(), timeoutMs);
      if (trial) this.breakerOpenUntil = 0;
      return result;
    } catch (error) {
      this.breakerOpenUntil = Date.now() + BREAKER_OPEN_MS;
      this.stats.errors += 1;
      this.logger.warn(`cache store unavailable, continuing without it: ${(error as Error).message}`);
      return fallback;
    } finally {
      if (trial) this.trialRunning = false;
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.redis?.isOpen) await this.redis.close().catch(() => undefined);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CacheTimeout(`cache operation timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
