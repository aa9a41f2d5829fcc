import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import type { ApiKeyAuthenticator } from '../common/auth/api-key.js';
import type { ApiKeyScope, AuthUser } from '../common/auth/auth-user.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { NEAR_KEYS } from '../infrastructure/cache/cache-invalidation.js';
import { NearCache } from '../infrastructure/cache/near-cache.js';
import { ActiveUsers, type ActiveUserRow } from '../users/active-users.service.js';
import { parseKeyText, secretMatches } from './api-key-text.js';
import { ApiKeyThrottle } from './api-key-throttle.js';
import { ApiKeyUsage } from './api-key-usage.js';
import { ApiKeysRepository } from './api-keys.repository.js';

/** A key as the in-process tier keeps it (by prefix): what authenticating needs, nothing shown. */
interface CachedKey {
  id: number;
  prefix: string;
  userId: number;
  secretHash: Buffer;
  scopes: ApiKeyScope[];
  clientIds: number[] | null;
  /** Epoch ms; null: never expires. */
  expiresAt: number | null;
  revoked: boolean;
}

/** No key with this prefix, as kept in the in-process tier (a plain `null` could not be cached). */
const NO_KEY = false;
/** A key without expiry still fills AuthUser.tokenExpiresAt (nothing reads it for a key). */
const NEVER = 8.64e15;
/** Key texts whose secret matched, remembered by their exact text (as verified JWTs are). */
const VERIFIED_KEYS_MAX = 10_000;

/**
 * Authenticates requests that present an API key, for the global guard (the ApiKeyAuthenticator
 * port). The key is found by its prefix through the in-process tier, which a database trigger
 * invalidates on every instance when a key is created, revoked or deleted (and the revoking
 * instance at once); its owner is the row every JWT request reads (ActiveUsers), so a role, client
 * or activity change of the owner applies to their keys on the next request. A request with a
 * key therefore costs what a JWT request costs: two in-process lookups and one SHA-256, no I/O.
 * Failed attempts are counted per IP (ApiKeyThrottle) and uses noted for `last_used_at` (ApiKeyUsage).
 */
@Injectable()
export class ApiKeyAuth implements ApiKeyAuthenticator {
  /**
   * Exact key text → the in-process key entry its secret was checked against. Valid only while that
   * very entry is the current one: any change of the key (revocation, deletion) replaces or drops
   * the entry on every instance, and the text is then checked afresh. Saves the SHA-256 per request.
   */
  private readonly verified = new LRUCache<string, CachedKey>({ max: VERIFIED_KEYS_MAX });

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly near: NearCache,
    private readonly users: ActiveUsers,
    private readonly throttle: ApiKeyThrottle,
    private readonly usage: ApiKeyUsage,
  ) {}

  async authenticate(text: string, request: Request): Promise<AuthUser> {
    const ip = clientIp(request);
    await this.throttle.check(ip);
    const user = await this.resolve(text);
    if (!user) {
      await this.throttle.failed(ip);
      throw new DomainError(ERRORS.invalidCredentials);
    }
    this.usage.used(user.apiKey!.id);
    return user;
  }

  knownCaller(text: string, request: Request): AuthUser | undefined {
    if (!this.throttle.knownClear(clientIp(request))) return undefined;
    const key = this.current(text);
    if (!key) return undefined;
    const owner = this.users.cached(key.userId);
    if (!owner) return undefined;
    this.usage.used(key.id);
    return authUser(key, owner);
  }

  async isUsable(grant: { id: number; prefix: string }): Promise<boolean> {
    const key = await this.keyByPrefix(grant.prefix);
    return key !== null && key.id === grant.id && usable(key);
  }

  /** The owner acting through the key, or null when the key is not accepted (for whatever reason: all answer alike). */
  private async resolve(text: string): Promise<AuthUser | null> {
    const parsed = parseKeyText(text);
    if (!parsed) return null;
    const key = await this.keyByPrefix(parsed.prefix);
    if (!key || !usable(key) || !this.secretOf(text, key, parsed.secret)) return null;
    const owner = await this.users.get(key.userId);
    return owner ? authUser(key, owner) : null;
  }

  /** The usable key of `text` from the in-process tier, its secret checked (once per entry); undefined when not known or not accepted. */
  private current(text: string): CachedKey | undefined {
    const seen = this.verified.get(text);
    const prefix = seen?.prefix ?? parseKeyText(text)?.prefix;
    const key = prefix === undefined ? undefined : this.near.get<CachedKey | typeof NO_KEY>(NEAR_KEYS.apiKey(prefix));
    if (!key || !usable(key)) return undefined;
    if (seen === key) return key;
    const parsed = parseKeyText(text);
    return parsed && this.secretOf(text, key, parsed.secret) ? key : undefined;
  }

  /** Whether `secret` is the key's; a match is remembered for `text` and this entry. */
  private secretOf(text: string, key: CachedKey, secret: string): boolean {
    if (!secretMatches(secret, key.secretHash)) return false;
    this.verified.set(text, key);
    return true;
  }

  private async keyByPrefix(prefix: string): Promise<CachedKey | null> {
    const cached = this.near.get<CachedKey | typeof NO_KEY>(NEAR_KEYS.apiKey(prefix));
    if (cached !== undefined) return cached === NO_KEY ? null : cached;
    const ticket = this.near.ticket();
    const row = await this.keys.credentialByPrefix(prefix);
    const key: CachedKey | null = row && {
      id: row.id,
      prefix,
      userId: row.user_id,
      secretHash: row.secret_hash,
      scopes: row.scopes,
      clientIds: row.client_ids,
      expiresAt: row.expires_at === null ? null : row.expires_at.getTime(),
      revoked: row.revoked_at !== null,
    };
    this.near.fill(NEAR_KEYS.apiKey(prefix), key ?? NO_KEY, ticket);
    return key;
  }
}

/** Not revoked and not expired (checked per request: expiry needs no invalidation). */
function usable(key: CachedKey): boolean {
  return !key.revoked && (key.expiresAt === null || key.expiresAt > Date.now());
}

function authUser(key: CachedKey, owner: ActiveUserRow): AuthUser {
  return {
    id: owner.id,
    email: owner.email,
    name: owner.name,
    roles: owner.roles,
    clientIds: owner.client_list,
    // Not a token: nothing a key authenticates may be revoked as one (logout refuses keys; a stream checks the key).
    tokenId: `api-key:${key.id}`,
    tokenFamily: null,
    tokenExpiresAt: new Date(key.expiresAt ?? NEVER),
    apiKey: { id: key.id, prefix: key.prefix, scopes: key.scopes, clientIds: key.clientIds },
  };
}

/** The client address as Express resolves it (TRUST_PROXY decides whether a proxy's hop counts), as login does. */
function clientIp(request: Request): string {
  return request.ip ?? request.socket.remoteAddress ?? 'unknown';
}
