import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { AccessScope } from './access-scope.js';
import type { AuthUser } from './auth-user.js';

/** The authenticated caller (set by the global AuthGuard). */
export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthUser => {
  return ctx.switchToHttp().getRequest<{ user: AuthUser }>().user;
});

/** The caller's data scope, to pass as the first argument to services/repositories. */
export const CurrentScope = createParamDecorator((_: unknown, ctx: ExecutionContext): AccessScope => {
  return AccessScope.of(ctx.switchToHttp().getRequest<{ user: AuthUser }>().user);
});
