import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';

/** Bookkeeping bytes per entry on top of key and value (LRU node, entry object). */
const ENTRY_OVERHEAD_BYTES = 96;

/**
 * The in-process cache tier: an LRU bounded by bytes, every entry with a TTL, in front of the
 * shared store (Redis) and the database. Only InvalidationBus makes it usable: the tier answers
 * nothing (`get` misses, `fill` drops) until the bus listens for invalidations, and it is emptied
 * whenever the bus loses its connection, because messages sent meanwhile are lost.
 *
 * Fills are guarded against a concurrent invalidation: a reader takes a `ticket()` before it reads
 * the lower tier, and `fill` keeps the value only if no invalidation arrived since. Otherwise a read
 * that started before a change but finished after its invalidation would store the old value.
 */
@Injectable()
export class NearCache {
  private readonly entries: LRUCache<string, object | string | number | boolean> | null;
  private epoch = 0;
  private live = false;
  private readonly ttlMs: number;
  /** Running totals read by the metrics module. */
  readonly stats = { hits: 0, misses: 0, invalidations: 0 };

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.ttlMs = config.nearCacheTtlSeconds * 1000;
    this.entries =
      config.nearCacheMaxBytes > 0
        ? new LRUCache({
            maxSize: config.nearCacheMaxBytes,
            ttl: config.nearCacheTtlSeconds * 1000,
            // Expired entries are dropped when read; no timer per entry.
            ttlAutopurge: false,
            sizeCalculation: (value, key) => key.length + sizeOf(value) + ENTRY_OVERHEAD_BYTES,
          })
        : null;
  }

  /** Whether the tier serves at all (configured, and the invalidation bus is listening). */
  get enabled(): boolean {
    return this.live;
  }

  get<T extends object | string | number | boolean>(key: string): T | undefined {
    if (!this.live) return undefined;
    const value = this.entries!.get(key) as T | undefined;
    if (value === undefined) this.stats.misses += 1;
    else this.stats.hits += 1;
    return value;
  }

  /** Taken before reading a lower tier; `fill` with it keeps the value only if nothing was invalidated since. */
  ticket(): number {
    return this.epoch;
  }

  /** `ttlMs` may shorten the tier's TTL, never lengthen it: the TTL is the bound on staleness if a message is lost. */
  fill(key: string, value: object | string | number | boolean, ticket: number, ttlMs?: number): void {
    if (!this.live || ticket !== this.epoch) return;
    this.entries!.set(key, value, { ttl: Math.min(ttlMs ?? this.ttlMs, this.ttlMs) });
  }

  /**
   * Sets an entry this process itself decided (its own write, or a fact a message carried); no
   * ticket needed, and fills in flight are dropped. `ttlMs` may exceed the tier's TTL: a fact
   * that can only become true (a revocation) is not something a lost message could make stale.
   */
  put(key: string, value: object | string | number | boolean, ttlMs?: number): void {
    if (!this.live) return;
    this.epoch += 1;
    this.entries!.set(key, value, { ttl: ttlMs ?? this.ttlMs });
  }

  /**
   * A generation that exists only in this tier (an area whose changes arrive as invalidation
   * messages, never through the shared store): a random token until the area is invalidated.
   */
  localGeneration(area: string): string | undefined {
    if (!this.live) return undefined;
    const key = `gen:${area}`;
    let token = this.entries!.get(key) as string | undefined;
    if (token === undefined) {
      token = randomUUID();
      this.entries!.set(key, token);
    }
    return token;
  }

  invalidate(keys: Iterable<string>): void {
    this.epoch += 1;
    this.stats.invalidations += 1;
    if (!this.entries) return;
    for (const key of keys) this.entries.delete(key);
  }

  /** Called by the bus: serve only while invalidations can reach this process. Empties the tier either way. */
  setLive(live: boolean): void {
    this.epoch += 1;
    this.entries?.clear();
    this.live = live && this.entries !== null;
  }

  /** Bytes held (health and metrics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries?.size ?? 0, bytes: this.entries?.calculatedSize ?? 0 };
  }
}

/** Approximate bytes of a value: strings by length, small objects by their JSON length. */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null) return 8;
  if ('json' in value && typeof value.json === 'string') return value.json.length + 64;
  return JSON.stringify(value).length;
}
