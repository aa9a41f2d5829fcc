import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { Strategy } from 'passport';
import type { Role } from './roles.js';
import { DomainError } from '../errors/domain-error.js';
import { ERRORS } from '../errors/error-catalogue.js';
import { ACCESS_ROLES, PUBLIC_ROUTE } from './access.decorator.js';
import {
  API_KEY_AUTHENTICATOR,
  defaultKeyRule,
  KEY_ROUTE_RULE,
  keyAllows,
  presentedApiKey,
  type ApiKeyAuthenticator,
  type KeyRouteRule,
} from './api-key.js';
import type { AuthUser } from './auth-user.js';
import { parseBearer } from './bearer.js';

/** A strategy object during one authentication: passport's action functions set on it. */
interface StrategyActions {
  authenticate(request: Request, options: { session: boolean }): void;
  success(user: AuthUser, info?: unknown): void;
  fail(challenge?: unknown, status?: number): void;
  error(error: unknown): void;
  pass(): void;
  redirect(url: string, status?: number): void;
}

/** Injection token of the bearer (JWT) passport strategy instance, provided by AuthModule. */
export const BEARER_STRATEGY = Symbol('BEARER_STRATEGY');

/** What a route admits: public, or the roles it allows; and what it needs from an API key. */
interface RouteRules {
  roles: Role[] | 'public';
  key: KeyRouteRule;
}

/**
 * Global guard: authenticates every non-public route with the JWT strategy, or with an API key
 * when the request presents one (see api-key.ts), then checks the roles declared by @Access (none
 * declared → admin only) — the owner's roles for a key — and for a key also the scope the route
 * needs. A public route a key may never call (the auth routes) refuses a request that presents one.
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
    @Optional() @Inject(API_KEY_AUTHENTICATOR) private readonly keys?: ApiKeyAuthenticator,
  ) {}

  /** Per controller class and handler (a handler may be inherited by several controllers). */
  private readonly rules = new WeakMap<object, WeakMap<object, RouteRules>>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & { user?: AuthUser }>();
    const rules = this.rulesOf(context, request);
    const key = this.keys && presentedApiKey(request);
    if (rules.roles === 'public') {
      if (key === undefined || rules.key !== 'none') return true;
      await this.keys!.authenticate(key, request);
      throw new DomainError(ERRORS.notEnoughPermissions);
    }
    const user =
      key === undefined
        ? await authenticateBearer(this.strategy, request)
        : await this.keys!.authenticate(key, request);
    request.user = user;
    if (!user.roles.some((role) => (rules.roles as Role[]).includes(role)))
      throw new DomainError(ERRORS.notEnoughPermissions);
    if (user.apiKey && !keyAllows(rules.key, user.apiKey)) throw new DomainError(ERRORS.notEnoughPermissions);
    return true;
  }

  private rulesOf(context: ExecutionContext, request: Request): RouteRules {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.rules.get(controller);
    if (!byHandler) this.rules.set(controller, (byHandler = new WeakMap()));
    let rules = byHandler.get(handler);
    if (rules === undefined) {
      const targets = [handler, controller];
      // A handler answers one method on one path, so the default key rule is the handler's too.
      const routePath = (request.route as { path?: unknown } | undefined)?.path;
      rules = {
        roles: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)
          ? 'public'
          : (this.reflector.getAllAndOverride<Role[]>(ACCESS_ROLES, targets) ?? ['admin']),
        key:
          this.reflector.getAllAndOverride<KeyRouteRule>(KEY_ROUTE_RULE, targets) ??
          defaultKeyRule(request.method, typeof routePath === 'string' ? routePath : undefined),
      };
      byHandler.set(handler, rules);
    }
    return rules;
  }
}

/**
 * The caller of a request that must carry a bearer token: 401 "Not authenticated" when none is
 * presented, 401 "Could not validate credentials" when the header is not exactly
 * `Bearer <credential>` or the token is not valid (see bearer.ts), else the user.
 */
export function authenticateBearer(strategy: Strategy, request: Request): Promise<AuthUser> {
  const credential = parseBearer(request.headers.authorization);
  if (credential.kind === 'none') return Promise.reject(new DomainError(ERRORS.notAuthenticated));
  if (credential.kind === 'malformed') return Promise.reject(new DomainError(ERRORS.invalidCredentials));
  return runStrategy(strategy, request);
}

/**
 * Runs the strategy through passport's strategy interface: a per-request object inheriting from
 * the shared instance gets the action functions (`success`, `fail`, `error`, `pass`, `redirect`)
 * and `authenticate(req)` calls one of them — what `passport.authenticate(strategy, options,
 * callback)` does for a single strategy without sessions. Not through that function: it builds a
 * closure-heavy middleware per call, and with it a quarter of each request's allocations outlived
 * young-generation collections (scavenges of 4–5 ms under load instead of <1 ms).
 */
function runStrategy(shared: Strategy, request: Request): Promise<AuthUser> {
  return new Promise<AuthUser>((resolve, reject) => {
    let settled = false;
    const settle = (error: unknown, user: AuthUser | false, info?: unknown) => {
      if (settled) return;
      settled = true;
      try {
        resolve(handleResult(error, user, info));
      } catch (failure) {
        reject(failure);
      }
    };
    // A fresh object per request: the action functions are this request's.
    const strategy = Object.create(shared) as StrategyActions;
    strategy.success = (user: AuthUser, info?: unknown) => settle(null, user, info);
    strategy.fail = (challenge?: unknown) => settle(null, false, challenge);
    strategy.error = (error: unknown) => settle(error ?? new DomainError(ERRORS.invalidCredentials), false);
    // A bearer strategy neither passes nor redirects; either would be a failed authentication.
    strategy.pass = () => settle(null, false);
    strategy.redirect = () => settle(null, false);
    try {
      strategy.authenticate(request, { session: false });
    } catch (error) {
      settle(error, false);
    }
  });
}

function handleResult(error: unknown, user: AuthUser | false, info: unknown): AuthUser {
  // Errors from the strategy (a revoked token, or the database being down) keep their own status.
  if (error) throw error;
  if (!user) {
    const noToken = info instanceof Error && /no auth token/i.test(info.message);
    throw new DomainError(noToken ? ERRORS.notAuthenticated : ERRORS.invalidCredentials);
  }
  return user;
}
