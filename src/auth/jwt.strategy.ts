import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { LRUCache } from 'lru-cache';
import { createSecretKey } from 'node:crypto';
import type { Request } from 'express';
import { Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/auth/auth-user.js';
import { bearerToken } from '../common/auth/bearer.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { ActiveUsers } from '../users/active-users.service.js';
import type { ActiveUserRow } from '../users/active-users.service.js';
import { RevocationService } from './revocation.service.js';
import { issuedAfterEpoch, isWellFormed, type TokenClaims } from './token.service.js';

/** Access tokens whose signature and claims were verified, kept by their exact text. */
const VERIFIED_TOKENS_MAX = 10_000;

/** What passport sets on the per-request strategy object (see the guard's runStrategy). */
interface StrategyActions {
  success(user: AuthUser): void;
  error(error: unknown): void;
}

/**
 * Bearer access tokens: passport-jwt checks signature, HS256, iss, aud and exp; here we require
 * the claims to be complete, the type to be `access`, the jti and the token's family not revoked, the user active and the
 * token issued after the user's token epoch (password change, deactivation). The user row and the
 * revocation are read on every request, through the in-process cache tier that every change
 * invalidates on every instance, so role and client_list changes apply on the next request.
 *
 * A token's signature and claims never change, so a token verified once is remembered by its
 * exact text until it expires: the next request with it skips the HMAC and the JSON parsing (the
 * expiry is still checked per request; revocation and the user row always are). When both of those
 * are in the in-process tier the whole check is synchronous.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly verified = new LRUCache<string, TokenClaims>({ max: VERIFIED_TOKENS_MAX });

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly users: ActiveUsers,
    private readonly revocations: RevocationService,
  ) {
    super({
      // The one reading of the header, shared with logout (passport-jwt's own takes `Bearer a b` as `a`).
      jwtFromRequest: (req: Request) => bearerToken(req.headers.authorization) ?? null,
      // A KeyObject, not the string: jsonwebtoken otherwise tries to parse a string secret as a
      // PEM public key on every verify (~1 ms per request; ~20 µs with the key object).
      secretOrKey: createSecretKey(Buffer.from(config.jwtSecret as string)) as unknown as string,
      algorithms: ['HS256'],
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  /** Called per request on a per-request object inheriting from this instance (see the guard). */
  override authenticate(this: JwtStrategy & StrategyActions, req: Request, options?: object): void {
    const claims = this.verifiedClaims(req);
    if (claims === undefined) {
      super.authenticate(req, options);
      return;
    }
    const user = this.users.cached(Number(claims.sub));
    const revoked = this.cachedRevoked(claims);
    if (user === undefined || revoked === undefined) {
      this.check(claims).then(
        (u) => this.success(u),
        (e: unknown) => this.error(e),
      );
      return;
    }
    try {
      this.success(authUser(claims, accepted(claims, revoked, user)));
    } catch (error) {
      this.error(error);
    }
  }

  /**
   * The caller when everything the check needs is known in process (the same checks as
   * `authenticate`); undefined when anything is not known or the token is not accepted — the
   * request then goes the whole way and gets its answer (or its 401) from the guard.
   */
  knownCaller(req: Request): AuthUser | undefined {
    const claims = this.verifiedClaims(req);
    if (claims === undefined) return undefined;
    const user = this.users.cached(Number(claims.sub));
    const revoked = this.cachedRevoked(claims);
    if (user === undefined || revoked === undefined) return undefined;
    try {
      return authUser(claims, accepted(claims, revoked, user));
    } catch {
      return undefined;
    }
  }

  /** Claims of a token verified before and not expired — exactly when jsonwebtoken would call it expired (whole seconds, `now >= exp`). */
  private verifiedClaims(req: Request): TokenClaims | undefined {
    const token = bearerToken(req.headers.authorization);
    const claims = token === undefined ? undefined : this.verified.get(token);
    return claims === undefined || Math.floor(Date.now() / 1000) >= claims.exp ? undefined : claims;
  }

  async validate(req: Request, claims: Partial<TokenClaims>): Promise<AuthUser> {
    if (!isWellFormed(claims, 'access')) throw new DomainError(ERRORS.invalidCredentials);
    const token = bearerToken(req.headers.authorization);
    if (token !== undefined) this.verified.set(token, claims, { ttl: Math.max(1, claims.exp * 1000 - Date.now()) });
    return this.check(claims);
  }

  private async check(claims: TokenClaims): Promise<AuthUser> {
    // Independent reads (in-process tier, else cache and database): in parallel.
    const [revoked, familyRevoked, user] = await Promise.all([
      this.revocations.isRevoked(claims.jti),
      claims.fam === undefined ? false : this.revocations.isRevoked(claims.fam),
      this.users.get(Number(claims.sub)),
    ]);
    return authUser(claims, accepted(claims, revoked || familyRevoked, user));
  }

  /** Whether the token or its family (when it has one) is revoked, when the in-process tier knows both; else undefined. */
  private cachedRevoked(claims: TokenClaims): boolean | undefined {
    const revoked = this.revocations.cachedIsRevoked(claims.jti);
    if (revoked !== false || claims.fam === undefined) return revoked;
    return this.revocations.cachedIsRevoked(claims.fam);
  }
}

function accepted(claims: TokenClaims, revoked: boolean, user: ActiveUserRow | null): ActiveUserRow {
  if (revoked || !user || !issuedAfterEpoch(claims, user.tokens_valid_after_us))
    throw new DomainError(ERRORS.invalidCredentials);
  return user;
}

function authUser(claims: TokenClaims, user: ActiveUserRow): AuthUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    roles: user.roles,
    clientIds: user.client_list,
    tokenId: claims.jti,
    tokenFamily: claims.fam ?? null,
    tokenExpiresAt: new Date(claims.exp * 1000),
  };
}
