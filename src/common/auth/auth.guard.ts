import { ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard as PassportAuthGuard } from '@nestjs/passport';
import type { Role } from '../../users/entities/user.entity.js';
import { ACCESS_ROLES, PUBLIC_ROUTE } from './access.decorator.js';
import type { AuthUser } from './auth-user.js';

export const NOT_AUTHENTICATED = 'Not authenticated';
export const INVALID_CREDENTIALS = 'Could not validate credentials';
export const NOT_ENOUGH_PERMISSIONS = 'Not enough permissions';

/**
 * Global guard: authenticates every non-public route with the JWT strategy, then checks the
 * roles declared by @Access (none declared → admin only).
 */
@Injectable()
export class AuthGuard extends PassportAuthGuard('jwt') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    await super.canActivate(context);
    const user = context.switchToHttp().getRequest<{ user: AuthUser }>().user;
    const allowed = this.reflector.getAllAndOverride<Role[]>(ACCESS_ROLES, targets) ?? ['admin'];
    if (!user.roles.some((role) => allowed.includes(role))) throw new ForbiddenException({ detail: NOT_ENOUGH_PERMISSIONS });
    return true;
  }

  override handleRequest<T>(error: unknown, user: T, info: unknown): T {
    // Errors from the strategy (a revoked token, or the database being down) keep their own status.
    if (error) throw error;
    if (!user) {
      const noToken = info instanceof Error && /no auth token/i.test(info.message);
      throw new UnauthorizedException({ detail: noToken ? NOT_AUTHENTICATED : INVALID_CREDENTIALS });
    }
    return user;
  }
}
