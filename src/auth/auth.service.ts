import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { AUTH_LOGIN_ERRORS } from './auth.errors.js';
import { textProblem } from '../common/http/text-input.js';
import { UsersService, type UserRow } from '../users/users.service.js';
import { LoginThrottle } from './login-throttle.service.js';
import { PasswordService } from '../users/password.service.js';
import { RevocationService } from './revocation.service.js';
import { randomUUID } from 'node:crypto';
import { issuedAfterEpoch, tokenFamily, TokenService, type IssuedToken, type TokenClaims } from './token.service.js';

interface TokenPair {
  access: IssuedToken;
  refresh: IssuedToken;
}

/** Login, refresh-token rotation and logout. */
@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly passwords: PasswordService,
    private readonly tokens: TokenService,
    private readonly revocations: RevocationService,
    private readonly throttle: LoginThrottle,
  ) {}

  /**
   * Unknown e-mail, wrong password and inactive user all answer the same 401 after the same
   * argon2 work, so neither the body nor the timing tells which one it was.
   */
  async login(email: string, password: string, ip: string): Promise<TokenPair & { user: UserRow }> {
    await this.throttle.begin(email, ip);
    // An e-mail that is not acceptable text (NUL, control characters) cannot belong to a user.
    const user = textProblem(email) ? null : await this.users.findForLogin(email.trim());
    const passwordOk = user
      ? await this.passwords.verify(user.password_hash, password)
      : await this.passwords.dummyVerify(password);
    if (!user || !passwordOk || !user.is_active) {
      await this.throttle.failed(ip);
      throw new DomainError(AUTH_LOGIN_ERRORS.incorrectLogin);
    }
    await this.throttle.succeeded(email, ip);
    const { password_hash: _hash, ...row } = user;
    return { user: row, ...this.issuePair(row.id, randomUUID()) };
  }

  /**
   * Rotation: the presented refresh token is revoked atomically (`revokeOnce`), so of two
   * requests racing with the same token only one gets a new pair. A token presented again after
   * it was exchanged means two parties hold it (OAuth 2.0 Security BCP, refresh token rotation):
   * its whole family — every access and refresh token descended from the same login, the one it
   * was exchanged for included — is revoked, and the user must log in again.
   */
  async refresh(refreshToken: string | undefined): Promise<TokenPair> {
    const claims = refreshToken ? this.tokens.verify(refreshToken, 'refresh') : null;
    if (!claims) throw new DomainError(AUTH_LOGIN_ERRORS.invalidRefreshToken);
    const user = await this.users.findActive(Number(claims.sub));
    if (!user || !issuedAfterEpoch(claims, user.tokens_valid_after_us))
      throw new DomainError(AUTH_LOGIN_ERRORS.invalidRefreshToken);
    const family = tokenFamily(claims);
    if (await this.revocations.isRevoked(family)) throw new DomainError(AUTH_LOGIN_ERRORS.invalidRefreshToken);
    if (!(await this.revocations.revokeOnce(claims.jti, expiry(claims)))) {
      // Reuse. Of concurrent exchanges of one token exactly one passes revokeOnce; the pair it gets
      // carries the family revoked here, so it is refused from now on, wherever it is presented.
      await this.revocations.revoke(family, this.tokens.familyRevocationExpiry());
      throw new DomainError(AUTH_LOGIN_ERRORS.invalidRefreshToken);
    }
    return this.issuePair(user.id, family);
  }

  /** Revokes whichever of the two tokens is present and valid; anything else is ignored. */
  async logout(refreshToken: string | undefined, accessToken: string | undefined): Promise<void> {
    const valid = [
      refreshToken ? this.tokens.verify(refreshToken, 'refresh') : null,
      accessToken ? this.tokens.verify(accessToken, 'access') : null,
    ].filter((claims): claims is TokenClaims => claims !== null);
    await Promise.all(valid.map((claims) => this.revocations.revoke(claims.jti, expiry(claims))));
  }

  private issuePair(userId: number, family: string): TokenPair {
    return {
      access: this.tokens.issue(userId, 'access', family),
      refresh: this.tokens.issue(userId, 'refresh', family),
    };
  }
}

function expiry(claims: TokenClaims): Date {
  return new Date(claims.exp * 1000);
}
