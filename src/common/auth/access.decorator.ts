import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ERRORS } from '../errors/error-catalogue.js';
import type { Role } from './roles.js';

export const ACCESS_ROLES = 'access:roles';
export const PUBLIC_ROUTE = 'access:public';

/**
 * The one access decorator: which roles a route admits, enforced by the global
 * AuthGuard and documented in OpenAPI (bearer + 401/403). A route without @Access or @Public is
 * admin-only (fail closed). Put it on each route, or on a controller whose routes all admit the
 * same roles — not on both (OpenAPI would list the bearer requirement twice).
 */
export function Access(...roles: Role[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_ROLES, roles),
    ApiBearerAuth(),
    ApiErrors(ERRORS.notAuthenticated, ERRORS.invalidCredentials, ERRORS.notEnoughPermissions),
  );
}

/** No token needed (login, refresh, public image bytes, docs). */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(PUBLIC_ROUTE, true);
}
