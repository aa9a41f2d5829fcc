import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createSecretKey } from 'node:crypto';
import type { Request } from 'express';
import { Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/auth/auth-user.js';
import { bearerToken } from '../common/auth/bearer.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { UsersRepository } from '../users/users.repository.js';
import { RevocationService } from './revocation.service.js';
import { issuedAfterEpoch, isWellFormed, type TokenClaims } from './token.service.js';

/**
 * Bearer access tokens: passport-jwt checks signature, HS256, iss, aud and exp; here we require
 * the claims to be complete, the type to be `access`, the jti not revoked, the user active and the
 * token issued after the user's token epoch (password change, deactivation) — loaded fresh so role and client_list changes apply on the next request.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly users: UsersRepository,
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
    });
  }

  async validate(claims: Partial<TokenClaims>): Promise<AuthUser> {
    if (!isWellFormed(claims, 'access')) throw new DomainError(ERRORS.invalidCredentials);
    // Independent reads (cache, database): in parallel, so a request waits for one round trip, not two.
    const [revoked, user] = await Promise.all([this.revocations.isRevoked(claims.jti), this.users.findActiveById(Number(claims.sub))]);
    if (revoked || !user || !issuedAfterEpoch(claims, user.tokens_valid_after_us)) throw new DomainError(ERRORS.invalidCredentials);
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      roles: user.roles,
      clientIds: user.client_list,
      tokenId: claims.jti,
      tokenExpiresAt: new Date(claims.exp * 1000),
    };
  }
}
