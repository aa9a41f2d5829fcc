import { SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { ApiKeyGrant, ApiKeyScope, AuthUser } from './auth-user.js';
import { parseBearer } from './bearer.js';

/**
 * API keys as the guard sees them: how a request presents one, which scope a route needs, and the
 * port through which the feature that owns the keys authenticates them (common imports no feature).
 */

/** Every key's text starts with this; a JWT never does (its first part is base64url JSON, `eyJ…`). */
export const API_KEY_TEXT_PREFIX = 'tps_';
/** The header a key may be sent in instead of `Authorization: Bearer`. */
export const API_KEY_HEADER = 'x-api-key';

/** Injection token of the ApiKeyAuthenticator, provided by AuthModule. */
export const API_KEY_AUTHENTICATOR = Symbol('API_KEY_AUTHENTICATOR');

export interface ApiKeyAuthenticator {
  /**
   * The owner acting through the key (AuthUser with `apiKey` set); throws 401 "Could not validate
   * credentials" for an unknown, malformed, revoked or expired key or an inactive owner, and 429
   * while the request's IP has failed too often.
   */
  authenticate(key: string, request: Request): Promise<AuthUser>;
  /** The same check when everything it needs is known in process; undefined otherwise (or when refused). */
  knownCaller(key: string, request: Request): AuthUser | undefined;
  /**
   * Whether the key `grant` names is still usable (not revoked, deleted or expired), read through the
   * same in-process tier as authentication: a change made on any instance counts once its cache
   * invalidation arrives, at once on the instance that made it. The owner is not judged here.
   */
  isUsable(grant: Pick<ApiKeyGrant, 'id' | 'prefix'>): Promise<boolean>;
}

/** What a route admits from a key: one scope, or `none` (a key never calls it: users, API keys, auth). */
export type KeyRouteRule = ApiKeyScope | 'none';
export const KEY_ROUTE_RULE = 'access:key-rule';

/**
 * `@KeyScope('ingest')` on a route or controller: the scope a key needs for it, instead of the
 * default (`read` for GET and HEAD, `write` for every other method, `webhooks` under /webhooks).
 * `@KeyScope('none')`: no key may call it (403 "Not enough permissions").
 */
export function KeyScope(rule: KeyRouteRule): MethodDecorator & ClassDecorator {
  return SetMetadata(KEY_ROUTE_RULE, rule);
}

/** Routes under /api/v1/webhooks (the API prefix of http/api-prefix.ts, spelt out: http imports auth). */
const WEBHOOK_ROUTES = /^\/api\/v1\/webhooks(\/|$)/;

/**
 * The rule of a route that declares none: every route under /webhooks needs the `webhooks` scope
 * whatever its method (a path rule, so no webhook route can be declared without it); otherwise a
 * read is `read` and anything else `write`.
 */
export function defaultKeyRule(method: string, routePath: string | undefined): KeyRouteRule {
  if (routePath !== undefined && WEBHOOK_ROUTES.test(routePath)) return 'webhooks';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

export function keyAllows(rule: KeyRouteRule, grant: Pick<ApiKeyGrant, 'scopes'>): boolean {
  return rule !== 'none' && grant.scopes.includes(rule);
}

/**
 * The API key a request presents, or undefined when it presents none: the `X-API-Key` header when
 * it is sent (whatever the Authorization header holds), else an `Authorization: Bearer` credential
 * that starts with `tps_`. A key's text is checked by the authenticator (a malformed one is a 401).
 */
export function presentedApiKey(request: Request): string | undefined {
  const header = request.headers[API_KEY_HEADER];
  if (header !== undefined) return Array.isArray(header) ? header.join(',') : header;
  const authorization = request.headers.authorization;
  if (authorization === undefined) return undefined;
  const credential = parseBearer(authorization);
  return credential.kind === 'token' && credential.token.startsWith(API_KEY_TEXT_PREFIX) ? credential.token : undefined;
}
