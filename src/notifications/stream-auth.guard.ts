import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Strategy } from 'passport';
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
 */
@Injectable()
export class StreamAuthGuard implements CanActivate {
  constructor(
    private readonly tickets: StreamTickets,
    @Inject(BEARER_STRATEGY) private readonly strategy: Strategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<StreamRequest>();
    const ticket = req.query.ticket;
    if (ticket !== undefined) {
      if (typeof ticket !== 'string') throw new DomainError(ERRORS.invalidCredentials);
      req.streamIdentity = await this.tickets.redeem(ticket);
      return true;
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
