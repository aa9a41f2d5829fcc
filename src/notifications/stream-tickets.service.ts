import { Inject, Injectable } from '@nestjs/common';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { RevocationService } from '../auth/revocation.service.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { StreamCredentials } from './stream-credentials.js';

/** Seconds within which a stream ticket must be used. */
export const TICKET_SECONDS = 60;

/** Who a stream belongs to and which access token it lives on. */
export interface StreamIdentity {
  userId: number;
  tokenId: string;
  /** The access token's family (see tokenFamily in the auth module), revoked as a whole on refresh-token reuse. */
  tokenFamily: string | null;
  /** Expiry of the access token (ms since the epoch): the stream ends then. */
  tokenExpiresAt: number;
  /** Issue time of the access token (µs since the epoch), judged against the user's token epoch. */
  tokenIssuedUs: number;
}

interface TicketClaims {
  u: number;
  j: string;
  e: number;
  tj: string;
  tf?: string;
  te: number;
  ti: number;
}

/**
 * Stream tickets, for browsers' EventSource (which cannot send a header): `<payload>.<mac>`, the
 * payload naming the user, the ticket's own id and expiry, and the access token that asked for it
 * (id, expiry, issue time). The MAC key is derived from JWT_SECRET for this purpose only, so a
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
        (claims.tf === undefined || typeof claims.tf === 'string');
      return ok ? (claims as TicketClaims) : null;
    } catch {
      return null;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
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
