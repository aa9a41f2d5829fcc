import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { CacheService } from './cache.service.js';
import { InvalidationBus } from './invalidation-bus.js';
import { NearCache } from './near-cache.js';

/** A cached answer as the bytes to send: JSON text (and its weak ETag, computed once per fill). */
export interface CachedJson {
  json: string;
  etag: string;
}

/** A cache key with the generation tokens it was built from (each `[area, token]`). */
interface CacheKey {
  text: string;
  generations: readonly (readonly [area: string, token: string])[];
}

/** A read through the tiers: the answer, whether it was cached, and how to find it again at once. */
interface TieredRead {
  value: CachedJson;
  hit: boolean;
  /** The same entry from the in-process tier, while every generation of its key is current; else undefined. */
  again: () => CachedJson | undefined;
}

/**
 * The two-tier read path of cached answers: the in-process tier (NearCache) first, then the shared
 * store (CacheService: Redis, or process memory without REDIS_URL), then the computation.
 *
 * Generations: a key embeds the current generation of every area it depends on. The in-process tier
 * keeps generations too; `bump` changes the shared one first, then invalidates the in-process copy
 * here and, through InvalidationBus, on every instance, so their next read fetches the new token.
 * When the shared store cannot answer, a random generation is kept in the in-process tier instead:
 * the bus still invalidates it, so with Redis down cached answers stay correct per instance.
 *
 * Values are kept as JSON text with their ETag (`CachedJson`), so a hit writes bytes and never
 * serializes again. The shared store holds the same text.
 */
@Injectable()
export class TieredCache {
  constructor(
    private readonly shared: CacheService,
    private readonly near: NearCache,
    private readonly bus: InvalidationBus,
  ) {
    // Without Redis each instance has its own "shared" store: a generation bumped elsewhere must be
    // bumped in this process's store as well, or the next read would fetch the old token from it.
    if (shared.storeKind === 'memory') {
      bus.onMessage((keys) => {
        const areas = keys.filter((k) => k.startsWith('gen:')).map((k) => k.slice(4));
        if (areas.length) void shared.bump(...areas);
      });
    }
  }

  async generations(areas: string[]): Promise<string[]> {
    if (!this.near.enabled) return this.shared.generations(areas);
    const out: string[] = new Array<string>(areas.length);
    let missing: number[] | undefined;
    for (let i = 0; i < areas.length; i++) {
      const token = this.near.get<string>(`gen:${areas[i]}`);
      if (token === undefined) (missing ??= []).push(i);
      else out[i] = token;
    }
    if (!missing) return out;
    const ticket = this.near.ticket();
    const fetched = await this.shared.sharedGenerations(missing.map((i) => areas[i]));
    missing.forEach((index, j) => {
      // The store did not answer: this tier's own token, invalidated by the bus like any other.
      const token = fetched?.[j] ?? this.near.localGeneration(areas[index]) ?? `x${Math.random()}`;
      if (fetched) this.near.fill(`gen:${areas[index]}`, token, ticket);
      out[index] = token;
    });
    return out;
  }

  /** `<area>:<generations>:<hash of parts>`; `parts` must be normalized by the caller. */
  async key(area: string, dependsOn: string[], parts: unknown): Promise<CacheKey> {
    const gens = await this.generations(dependsOn);
    const digest = createHash('sha1').update(JSON.stringify(parts)).digest('base64url');
    return { text: `${area}:${gens.join('.')}:${digest}`, generations: dependsOn.map((a, i) => [a, gens[i]] as const) };
  }

  /** `key` further depending on a generation kept only in this process (see `localGeneration`). */
  static derived(key: CacheKey, area: string, token: string): CacheKey {
    return { text: `${key.text}:${area}:${token}`, generations: [...key.generations, [area, token]] };
  }

  /** The cached JSON under `key`, else `compute()` serialized, stored in both tiers. */
  async json(key: CacheKey, ttlSeconds: number, compute: () => Promise<unknown>): Promise<TieredRead> {
    const again = () => this.again(key);
    const near = this.near.get<CachedJson>(key.text);
    if (near) return { value: near, hit: true, again };
    const ticket = this.near.ticket();
    const stored = await this.shared.get<string>(key.text);
    if (stored !== undefined) {
      const value = toCachedJson(stored);
      this.near.fill(key.text, value, ticket, ttlSeconds * 1000);
      return { value, hit: true, again };
    }
    const value = toCachedJson(JSON.stringify(await compute()));
    await this.shared.set(key.text, value.json, ttlSeconds);
    this.near.fill(key.text, value, ticket, ttlSeconds * 1000);
    return { value, hit: false, again };
  }

  /**
   * Kept only in this process (answers whose invalidation arrives as bus messages, never through the
   * shared store); computed every time while the in-process tier is off.
   */
  async local(key: CacheKey, ttlSeconds: number, compute: () => Promise<unknown>): Promise<TieredRead> {
    const again = () => this.again(key);
    const near = this.near.get<CachedJson>(key.text);
    if (near) return { value: near, hit: true, again };
    const ticket = this.near.ticket();
    const value = toCachedJson(JSON.stringify(await compute()));
    this.near.fill(key.text, value, ticket, ttlSeconds * 1000);
    return { value, hit: false, again };
  }

  /**
   * Synchronous: the entry under `key` from the in-process tier if each generation it was built with
   * is still the current one there (an invalidation removes the token, so an old key never matches).
   */
  private again(key: CacheKey): CachedJson | undefined {
    for (const [area, token] of key.generations) if (this.near.get<string>(`gen:${area}`) !== token) return undefined;
    return this.near.get<CachedJson>(key.text);
  }

  /** A generation kept only in this process; undefined while the in-process tier is off. */
  localGeneration(area: string): string | undefined {
    return this.near.localGeneration(area);
  }

  /** Invalidates everything cached under the areas, in both tiers, on every instance. */
  async bump(...areas: string[]): Promise<void> {
    if (areas.length === 0) return;
    await this.shared.bump(...areas);
    await this.bus.publish(areas.map((a) => `gen:${a}`));
  }
}

/** JSON text and its weak ETag, the one Express would compute for the same body on every send. */
export function toCachedJson(json: string): CachedJson {
  const length = Buffer.byteLength(json);
  const hash = createHash('sha1').update(json).digest('base64').slice(0, 27);
  return { json, etag: `W/"${length.toString(16)}-${hash}"` };
}
