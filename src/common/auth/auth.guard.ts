import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import passport, { type Strategy } from 'passport';
import type { Role } from '../../users/entities/user.entity.js';
import { ACCESS_ROLES, PUBLIC_ROUTE } from './access.decorator.js';
import type { AuthUser } from './auth-user.js';

export const NOT_AUTHENTICATED = 'Not authenticated';
export const INVALID_CREDENTIALS = 'Could not validate credentials';
export const NOT_ENOUGH_PERMISSIONS = 'Not enough permissions';

/** Injection token of the bearer (JWT) passport strategy instance, provided by AuthModule. */
export const BEARER_STRATEGY = Symbol('BEARER_STRATEGY');

/**
 * Global guard: authenticates every non-public route with the JWT strategy, then checks the
 * roles declared by @Access (none declared → admin only).
 *
 * It runs this application's own strategy instance rather than `AuthGuard('jwt')`: passport's
 * name registry is process-global, so with a by-name lookup two applications in one process
 * (the multi-instance tests) would both authenticate through whichever registered last — with
 * that application's database connection, failing with 500 once it is closed.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(BEARER_STRATEGY) private readonly strategy: Strategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request & { user?: AuthUser }>();
    const user = await this.authenticate(request, http.getResponse<Response>());
    request.user = user;
    const allowed = this.reflector.getAllAndOverride<Role[]>(ACCESS_ROLES, targets) ?? ['admin'];
    if (!user.roles.some((role) => allowed.includes(role))) throw new ForbiddenException({ detail: NOT_ENOUGH_PERMISSIONS });
    return true;
  }

  private authenticate(request: Request, response: Response): Promise<AuthUser> {
    return new Promise<AuthUser>((resolve, reject) => {
      // A fresh object per request, as passport does for named strategies: it stores the
      // request's success/fail callbacks on it, so a shared instance would mix up requests.
      const strategy = Object.create(this.strategy) as Strategy;
      passport.authenticate(strategy, { session: false }, (error: unknown, user: AuthUser | false, info: unknown) => {
        try {
          resolve(this.handleRequest(error, user, info));
        } catch (failure) {
          reject(failure);
        }
      })(request, response, (error?: unknown) => reject(error ?? new UnauthorizedException({ detail: INVALID_CREDENTIALS })));
    });
  }

  private handleRequest(error: unknown, user: AuthUser | false, info: unknown): AuthUser {
    // Errors from the strategy (a revoked token, or the database being down) keep their own status.
    if (error) throw error;
    if (!user) {
      const noToken = info instanceof Error && /no auth token/i.test(info.message);
      throw new UnauthorizedException({ detail: noToken ? NOT_AUTHENTICATED : INVALID_CREDENTIALS });
    }
    return user;
  }
}
