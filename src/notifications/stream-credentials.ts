import { Injectable } from '@nestjs/common';
import { NotificationsRepository } from './notifications.repository.js';
import type { StreamIdentity } from './stream-tickets.service.js';

/**
 * Whether the credential a stream lives on is still good: the access token (and its family) not
 * revoked, not expired, issued after the user's token epoch (password change, deactivation), and
 * the user active with a role that may read notifications. The same rule as every bearer request,
 * read from PostgreSQL rather than the cache tiers: a ticket is judged at redemption and an open
 * stream every second on whichever instance holds it, and a revocation committed by any instance
 * is seen by the next check there, without waiting for the cache invalidation to arrive.
 */
@Injectable()
export class StreamCredentials {
  constructor(private readonly repository: NotificationsRepository) {}

  /** The identities (of those given) whose credential is still good. */
  async valid(identities: readonly StreamIdentity[]): Promise<Set<StreamIdentity>> {
    const now = Date.now();
    const live = identities.filter((identity) => identity.tokenExpiresAt > now);
    if (live.length === 0) return new Set();
    const credentialIds = live.flatMap((i) => (i.tokenFamily === null ? [i.tokenId] : [i.tokenId, i.tokenFamily]));
    const { users, revoked } = await this.repository.credentials(
      [...new Set(live.map((i) => i.userId))],
      [...new Set(credentialIds)],
    );
    const epochs = new Map(users.map((u) => [u.id, u.epoch_us === null ? null : Number(u.epoch_us)]));
    const revokedIds = new Set(revoked);
    return new Set(
      live.filter(({ userId, tokenId, tokenFamily, tokenIssuedUs }) => {
        const epoch = epochs.get(userId);
        if (epoch === undefined || (epoch !== null && tokenIssuedUs <= epoch)) return false;
        return !revokedIds.has(tokenId) && (tokenFamily === null || !revokedIds.has(tokenFamily));
      }),
    );
  }

  async isValid(identity: StreamIdentity): Promise<boolean> {
    return (await this.valid([identity])).has(identity);
  }
}
