import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import type { Request } from 'express';
import type { Strategy } from 'passport';
import { API_KEY_AUTHENTICATOR, keyAllows, presentedApiKey, type ApiKeyAuthenticator } from '../common/auth/api-key.js';
import { authenticateBearer, BEARER_STRATEGY } from '../common/auth/auth.guard.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { streamIdentityOf, StreamTickets, type StreamIdentity } from './stream-tickets.service.js';

const STREAM_ROLES = ['admin', 'user'];

export type StreamRequest = Request & { streamIdentity?: StreamIdentity };

/**
 * Authentication of the stream route, which is public to the global guard because a browser's
 * EventSource cannot send a header: `?ticket=` when present (redeemed here, once), else the bearer
 * header exactly as every other route (401 without one, 403 for a role without notifications),
 * or an API key in either key header, which needs the `read` scope like every GET (401 for a bad
 * key, 403 without the scope). A guard, so it runs before the query is validated, like the global one.
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
    const user =
      key !== undefined ? await this.keys!.authenticate(key, req) : await authenticateBearer(this.strategy, req);
    if (!user.roles.some((role) => STREAM_ROLES.includes(role))) throw new DomainError(ERRORS.notEnoughPermissions);
    if (user.apiKey && !keyAllows('read', user.apiKey)) throw new DomainError(ERRORS.notEnoughPermissions);
    req.streamIdentity = streamIdentityOf(user, req.headers.authorization);
    return true;
  }
}
