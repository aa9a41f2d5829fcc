import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { createHash, randomUUID } from 'node:crypto';
import type { AppConfig } from '../common/config/app-config.js';
import { preciseNowMicros } from '../common/time/precise-clock.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { MAX_INT4 } from '../common/int4.js';

type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  sub: string;
  exp: number;
  iat: number;
  iss: string;
  aud: string;
  jti: string;
  token_type: TokenType;
  /** Issue time in microseconds since the Unix epoch (`iat` has whole seconds only). */
  iat_us?: number;
  /** The login this token descends from (see tokenFamily); absent on tokens issued outside a login. */
  fam?: string;
}

/**
 * The family of a token: every access and refresh token descended from one login by refresh
 * rotation carries the same random `fam`, so revoking the family id (a row in revoked_tokens, like
 * a jti) revokes all of them at once, whichever instance checks. A refresh token without `fam`
 * gets a family derived from its jti, so its descendants can still be revoked with it.
 */
export function tokenFamily(claims: TokenClaims): string {
  if (claims.fam !== undefined) return claims.fam;
  const hex = createHash('sha256').update(`token-family:${claims.jti}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Whether the token was issued after the user's token epoch (null: none). Tokens carry their
 * issue time in microseconds; one without it is judged by `iat`, whole seconds rounded down, so a
 * token from the epoch's own second counts as issued before it.
 */
export function issuedAfterEpoch(claims: TokenClaims, epochMicros: number | null): boolean {
  if (epochMicros === null) return true;
  const issuedMicros = claims.iat_us ?? claims.iat * 1_000_000;
  return issuedMicros > epochMicros;
}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresAt: Date;
}

/** Signs and verifies JWTs: HS256 only, iss/aud pinned, exp required, random jti. */
@Injectable()
export class TokenService {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A new token; `family` (see tokenFamily) when it descends from a login. */
  issue(userId: number, type: TokenType, family?: string): IssuedToken {
    const lifetimeSeconds =
      type === 'access' ? this.config.accessTokenExpireMinutes * 60 : this.config.refreshTokenExpireDays * 86400;
    const jti = randomUUID();
    const issuedMicros = preciseNowMicros();
    const token = this.jwt.sign(
      // `iat` (and so `exp`) from the same instant as `iat_us`, so the two never disagree.
      {
        token_type: type,
        iat: Math.floor(issuedMicros / 1_000_000),
        iat_us: issuedMicros,
        ...(family && { fam: family }),
      },
      {
        algorithm: 'HS256',
        subject: String(userId),
        issuer: this.config.jwtIssuer,
        audience: this.config.jwtAudience,
        expiresIn: lifetimeSeconds,
        jwtid: jti,
      },
    );
    const claims = this.jwt.decode<TokenClaims>(token);
    return { token, jti, expiresAt: new Date(claims.exp * 1000) };
  }

  /** Until when a family revoked now must stay revoked: past the expiry of any token of it, even one issued meanwhile. */
  familyRevocationExpiry(): Date {
    return new Date(Date.now() + (this.config.refreshTokenExpireDays * 86400 + 3600) * 1000);
  }

  /** Verifies signature, algorithm, iss, aud, exp (required) and token_type; null when invalid. */
  verify(token: string, expected: TokenType): TokenClaims | null {
    try {
      const claims = this.jwt.verify<TokenClaims>(token, {
        algorithms: ['HS256'],
        issuer: this.config.jwtIssuer,
        audience: this.config.jwtAudience,
      });
      return isWellFormed(claims, expected) ? claims : null;
    } catch {
      return null;
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Claims complete and of the expected type. `sub` must fit the users.id column and `jti` the
 * revoked_tokens.jti uuid column, so a malformed claim is a 401 and never a database error (500).
 */
export function isWellFormed(claims: Partial<TokenClaims>, expected: TokenType): claims is TokenClaims {
  return (
    typeof claims.exp === 'number' &&
    typeof claims.iat === 'number' &&
    typeof claims.sub === 'string' &&
    /^[1-9]\d{0,9}$/.test(claims.sub) &&
    Number(claims.sub) <= MAX_INT4 &&
    typeof claims.jti === 'string' &&
    UUID.test(claims.jti) &&
    (claims.iat_us === undefined || Number.isSafeInteger(claims.iat_us)) &&
    (claims.fam === undefined || (typeof claims.fam === 'string' && UUID.test(claims.fam))) &&
    claims.token_type === expected
  );
}
