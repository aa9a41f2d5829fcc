import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ERRORS } from '../errors/error-catalogue.js';
import { KeyScope } from './api-key.js';
import type { Role } from './roles.js';

export const ACCESS_ROLES = 'access:roles';
export const PUBLIC_ROUTE = 'access:public';

/** Names of the OpenAPI security schemes (declared in openapi-document.ts). */
export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'apiKey';

/**
 * The one access decorator: which roles a route admits, enforced by the global
 * AuthGuard and documented in OpenAPI (bearer or API key + 401/403). A route without @Access or @Public is
 * admin-only (fail closed). Put it on each route, or on a controller whose routes all admit the
 * same roles — not on both (OpenAPI would list the security requirements twice).
 * An API key acting for an owner with one of these roles may call the route when its scope covers
 * it (see KeyScope); routes no key may call use AccessWithoutKeys.
 */
export function Access(...roles: Role[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_ROLES, roles),
    ApiBearerAuth(BEARER_SCHEME),
    ApiSecurity(API_KEY_SCHEME),
    ApiErrors(
      ERRORS.notAuthenticated,
      ERRORS.invalidCredentials,
      ERRORS.notEnoughPermissions,
      ERRORS.tooManyKeyAttempts,
    ),
  );
}

/**
 * @Access for a route only a person's token opens (user management, API keys): a request with an
 * API key answers 403 "Not enough permissions".
 */
export function AccessWithoutKeys(...roles: Role[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_ROLES, roles),
    KeyScope('none'),
    ApiBearerAuth(BEARER_SCHEME),
    ApiErrors(
      ERRORS.notAuthenticated,
      ERRORS.invalidCredentials,
      ERRORS.notEnoughPermissions,
      ERRORS.tooManyKeyAttempts,
    ),
  );
}

/** No token needed (login, refresh, public image bytes, docs). */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(PUBLIC_ROUTE, true);
}
