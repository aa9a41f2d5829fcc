import { Inject, Injectable } from '@nestjs/common';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { RevocationService } from '../auth/revocation.service.js';
import { keyAllows } from '../common/auth/api-key.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { StreamCredentials } from './stream-credentials.js';

/** Seconds within which a stream ticket must be used. */
export const TICKET_SECONDS = 60;

/** The API key a stream lives on instead of an access token. */
export interface StreamKey {
  id: number;
  prefix: string;
  /** The clients the key is narrowed to: the stream carries only their events. Null: not narrowed. */
  clientIds: readonly number[] | null;
}

/** Who a stream belongs to and which credential it lives on: an access token, or an API key (`apiKey`). */
export interface StreamIdentity {
  userId: number;
  /** The access token's id (for a key: a placeholder, never looked up). */
  tokenId: string;
  /** The access token's family (see tokenFamily in the auth module), revoked as a whole on refresh-token reuse. */
  tokenFamily: string | null;
  /** Expiry of the access token (ms since the epoch): the stream ends then. */
  tokenExpiresAt: number;
  /** Issue time of the access token (µs since the epoch), judged against the user's token epoch. */
  tokenIssuedUs: number;
  /** Set when the stream lives on an API key: it ends when the key is revoked or expires. */
  apiKey?: StreamKey;
}

/** The stream identity of an authenticated caller (`authorization`: the header the bearer token came in). */
export function streamIdentityOf(user: AuthUser, authorization: string | undefined): StreamIdentity {
  const key = user.apiKey;
  return {
    userId: user.id,
    tokenId: user.tokenId,
    tokenFamily: user.tokenFamily,
    tokenExpiresAt: user.tokenExpiresAt.getTime(),
    tokenIssuedUs: key ? 0 : bearerIssuedMicros(authorization),
    ...(key && { apiKey: { id: key.id, prefix: key.prefix, clientIds: key.clientIds } }),
  };
}

interface TicketClaims {
  u: number;
  j: string;
  e: number;
  tj: string;
  tf?: string;
  te: number;
  ti: number;
  /** The API key that asked for it (id, prefix, clients), when one did. */
  k?: { i: number; p: string; c: number[] | null };
}

/**
 * Stream tickets, for browsers' EventSource (which cannot send a header): `<payload>.<mac>`, the
 * payload naming the user, the ticket's own id and expiry, and the access token that asked for it
 * (id, expiry, issue time) or the API key that did. The MAC key is derived from JWT_SECRET for this purpose only, so a
 * ticket is never a valid JWT and a JWT never a ticket. Single use across instances: redeeming
 * records the ticket id in revoked_tokens (PostgreSQL, atomically), the same table that makes a
 * refresh token single use, so it needs no Redis.
 */
@Injectable()
export class StreamTickets {
  private readonly key: Buffer;

  constructor(
    private readonly revocations: RevocationService,
    private readonly credentials: StreamCredentials,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.key = createHmac('sha256', config.jwtSecret as string)
      .update('notification-stream-ticket')
      .digest();
  }

  /**
   * A ticket for the caller. A key asking needs `read` beside the route's `write`: the ticket opens
   * the stream, a read, which the key must be allowed itself (else 403).
   */
  issueFor(user: AuthUser, authorization: string | undefined): string {
    if (user.apiKey && !keyAllows('read', user.apiKey)) throw new DomainError(ERRORS.notEnoughPermissions);
    return this.issue(streamIdentityOf(user, authorization));
  }

  issue(identity: StreamIdentity): string {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const claims: TicketClaims = {
      u: identity.userId,
      j: randomUUID(),
      e: Math.min(nowSeconds + TICKET_SECONDS, Math.floor(identity.tokenExpiresAt / 1000)),
      tj: identity.tokenId,
      ...(identity.tokenFamily !== null && { tf: identity.tokenFamily }),
      te: identity.tokenExpiresAt,
      ti: identity.tokenIssuedUs,
      ...(identity.apiKey && {
        k: {
          i: identity.apiKey.id,
          p: identity.apiKey.prefix,
          c: identity.apiKey.clientIds && [...identity.apiKey.clientIds],
        },
      }),
    };
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /**
   * The identity of a valid, unused, unexpired ticket whose credential is still good (see
   * StreamCredentials: the token that asked for it not revoked, the user still active, with the
   * role, and without a password change since), which is used up; else 401 and nothing is sent.
   */
  async redeem(ticket: string): Promise<StreamIdentity> {
    const claims = this.verify(ticket);
    if (!claims || claims.e * 1000 <= Date.now() || claims.te <= Date.now())
      throw new DomainError(ERRORS.invalidCredentials);
    const identity: StreamIdentity = {
      userId: claims.u,
      tokenId: claims.tj,
      tokenFamily: claims.tf ?? null,
      tokenExpiresAt: claims.te,
      tokenIssuedUs: claims.ti,
      ...(claims.k && { apiKey: { id: claims.k.i, prefix: claims.k.p, clientIds: claims.k.c } }),
    };
    if (!(await this.credentials.isValid(identity))) throw new DomainError(ERRORS.invalidCredentials);
    if (!(await this.revocations.revokeOnce(claims.j, new Date(claims.e * 1000))))
      throw new DomainError(ERRORS.invalidCredentials);
    return identity;
  }

  private verify(ticket: string): TicketClaims | null {
    const [payload, mac, extra] = ticket.split('.');
    if (!payload || !mac || extra !== undefined) return null;
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<TicketClaims>;
      const ok =
        Number.isSafeInteger(claims.u) &&
        Number.isSafeInteger(claims.e) &&
        Number.isSafeInteger(claims.te) &&
        Number.isSafeInteger(claims.ti) &&
        typeof claims.j === 'string' &&
        typeof claims.tj === 'string' &&
        (claims.tf === undefined || typeof claims.tf === 'string') &&
        (claims.k === undefined || keyClaimOk(claims.k));
      return ok ? (claims as TicketClaims) : null;
    } catch {
      return null;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

function keyClaimOk(k: Partial<NonNullable<TicketClaims['k']>>): boolean {
  return (
    Number.isSafeInteger(k.i) &&
    typeof k.p === 'string' &&
    (k.c === null || (Array.isArray(k.c) && k.c.every((id) => Number.isSafeInteger(id))))
  );
}

/** Issue time (µs) of a verified bearer token, read from its payload (`iat_us`, else `iat`). */
export function bearerIssuedMicros(authorization: string | undefined): number {
  const token = authorization?.split(' ')[1] ?? '';
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      iat?: number;
      iat_us?: number;
    };
    return claims.iat_us ?? (claims.iat ?? 0) * 1_000_000;
  } catch {
    return 0;
  }
}
