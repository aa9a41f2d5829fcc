import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { AccessScope } from './access-scope.js';
import type { AuthUser } from './auth-user.js';
import { DomainError } from '../errors/domain-error.js';
import { ERRORS } from '../errors/error-catalogue.js';

/** The authenticated caller (set by the global AuthGuard). */
export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthUser => {
  return ctx.switchToHttp().getRequest<{ user: AuthUser }>().user;
});

/** The caller's data scope, to pass as the first argument to services/repositories. */
export const CurrentScope = createParamDecorator((_: unknown, ctx: ExecutionContext): AccessScope => {
  return AccessScope.of(ctx.switchToHttp().getRequest<{ user: AuthUser }>().user);
});

/**
 * The scope of an admin route that reads the whole system (pipeline health): only an unnarrowed
 * scope will do, so an admin's API key narrowed to clients answers 403 there instead of a subset.
 */
export const WholeSystemScope = createParamDecorator((_: unknown, ctx: ExecutionContext): AccessScope => {
  const scope = AccessScope.of(ctx.switchToHttp().getRequest<{ user: AuthUser }>().user);
  if (!scope.all) throw new DomainError(ERRORS.notEnoughPermissions);
  return scope;
});
