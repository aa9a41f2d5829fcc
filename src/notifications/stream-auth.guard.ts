import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import type { Request } from 'express';
import type { Strategy } from 'passport';
import { API_KEY_AUTHENTICATOR, presentedApiKey, type ApiKeyAuthenticator } from '../common/auth/api-key.js';
import { authenticateBearer, BEARER_STRATEGY } from '../common/auth/auth.guard.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { bearerIssuedMicros, StreamTickets, type StreamIdentity } from './stream-tickets.service.js';

const STREAM_ROLES = ['admin', 'user'];

export type StreamRequest = Request & { streamIdentity?: StreamIdentity };

/**
 * Authentication of the stream route, which is public to the global guard because a browser's
 * EventSource cannot send a header: `?ticket=` when present (redeemed here, once), else the bearer
 * header exactly as every other route (401 without one, 403 for a role without notifications).
 * A guard, so it runs before the query is validated, like the global one.
 * An API key never opens a stream (403 once the key is found good, 401 when it is not): a stream
 * lives on a person's access token, and machines are told of changes by webhooks.
 */
@Injectable()
export class StreamAuthGuard implements CanActivate {
  constructor(
    private readonly tickets: StreamTickets,
    @Inject(BEARER_STRATEGY) private readonly strategy: Strategy,
    @Optional() @Inject(API_KEY_AUTHENTICATOR) private readonly keys?: ApiKeyAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<StreamRequest>();
    const ticket = req.query.ticket;
    if (ticket !== undefined) {
      if (typeof ticket !== 'string') throw new DomainError(ERRORS.invalidCredentials);
      req.streamIdentity = await this.tickets.redeem(ticket);
      return true;
    }
    const key = this.keys && presentedApiKey(req);
    if (key !== undefined) {
      await this.keys!.authenticate(key, req);
      throw new DomainError(ERRORS.notEnoughPermissions);
    }
    const user = await authenticateBearer(this.strategy, req);
    if (!user.roles.some((role) => STREAM_ROLES.includes(role))) throw new DomainError(ERRORS.notEnoughPermissions);
    req.streamIdentity = {
      userId: user.id,
      tokenId: user.tokenId,
      tokenFamily: user.tokenFamily,
      tokenExpiresAt: user.tokenExpiresAt.getTime(),
      tokenIssuedUs: bearerIssuedMicros(req.headers.authorization),
    };
    return true;
  }
}
