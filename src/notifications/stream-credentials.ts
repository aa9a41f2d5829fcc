import { Inject, Injectable, Optional } from '@nestjs/common';
import { API_KEY_AUTHENTICATOR, type ApiKeyAuthenticator } from '../common/auth/api-key.js';
import { NotificationsRepository } from './notifications.repository.js';
import type { StreamIdentity } from './stream-tickets.service.js';

/**
 * Whether the credential a stream lives on is still good, and its user active with a role that may
 * read notifications. For an access token: not revoked (nor its family), not expired, issued after
 * the user's token epoch (password change, deactivation) — the same rule as every bearer request,
 * read from PostgreSQL rather than the cache tiers: a ticket is judged at redemption and an open
 * stream every second on whichever instance holds it, and a revocation committed by any instance
 * is seen by the next check there, without waiting for the cache invalidation to arrive. For an API
 * key: not revoked, deleted or expired, judged by the key state the guard authenticates with (its
 * invalidation reaches every instance within a second); the owner is read from PostgreSQL as above.
 */
@Injectable()
export class StreamCredentials {
  constructor(
    private readonly repository: NotificationsRepository,
    @Optional() @Inject(API_KEY_AUTHENTICATOR) private readonly keys?: ApiKeyAuthenticator,
  ) {}

  /** The identities (of those given) whose credential is still good. */
  async valid(identities: readonly StreamIdentity[]): Promise<Set<StreamIdentity>> {
    const now = Date.now();
    const live = identities.filter((identity) => identity.tokenExpiresAt > now);
    if (live.length === 0) return new Set();
    const tokens = live.filter((i) => i.apiKey === undefined);
    const credentialIds = tokens.flatMap((i) => (i.tokenFamily === null ? [i.tokenId] : [i.tokenId, i.tokenFamily]));
    const [{ users, revoked }, usableKeys] = await Promise.all([
      this.repository.credentials([...new Set(live.map((i) => i.userId))], [...new Set(credentialIds)]),
      this.usableKeys(live),
    ]);
    const epochs = new Map(users.map((u) => [u.id, u.epoch_us === null ? null : Number(u.epoch_us)]));
    const revokedIds = new Set(revoked);
    return new Set(
      live.filter(({ userId, tokenId, tokenFamily, tokenIssuedUs, apiKey }) => {
        const epoch = epochs.get(userId);
        if (epoch === undefined) return false;
        if (apiKey) return usableKeys.has(apiKey.id);
        if (epoch !== null && tokenIssuedUs <= epoch) return false;
        return !revokedIds.has(tokenId) && (tokenFamily === null || !revokedIds.has(tokenFamily));
      }),
    );
  }

  async isValid(identity: StreamIdentity): Promise<boolean> {
    return (await this.valid([identity])).has(identity);
  }

  /** Ids of the usable keys among the identities' (none without the key feature). */
  private async usableKeys(identities: readonly StreamIdentity[]): Promise<Set<number>> {
    const keys = new Map(identities.flatMap((i) => (i.apiKey ? [[i.apiKey.id, i.apiKey] as const] : [])));
    if (keys.size === 0 || !this.keys) return new Set();
    const checked = await Promise.all([...keys.values()].map(async (key) => [key.id, await this.keys!.isUsable(key)]));
    return new Set(checked.filter(([, usable]) => usable).map(([id]) => id as number));
  }
}
