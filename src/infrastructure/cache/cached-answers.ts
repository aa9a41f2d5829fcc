import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { AuthUser } from '../../common/auth/auth-user.js';
import type { CachedJson } from './tiered-cache.js';

/** Remembered answers (caller × URL); each is a few hundred bytes, the JSON stays in the in-process tier. */
const REMEMBERED_MAX = 20_000;

/** An answer a route gave, and how to find it again while it is still current. */
interface Remembered {
  again: () => CachedJson | undefined;
  /** `X-Cache` to send (HIT: the answer comes from the cache), or none for routes that do not say. */
  xCache: boolean;
  /** The route template, for the request metrics. */
  route: string;
}

/**
 * Cached answers served before routing: once a guarded route has answered a caller with a cached
 * answer, the same GET URL from the same caller (same user, roles and clients) is answered from the
 * in-process tier by an Express middleware placed after the headers every response carries (request
 * id, security headers, CORS), without Nest's router, guard, pipes and interceptors — which cost
 * more CPU than the rest of such a request.
 *
 * The shortcut decides nothing on its own: the caller must authenticate synchronously from the
 * in-process tier (a token verified before and not expired, the user row and the revocation known,
 * `authenticate` applies every check the guard's strategy applies), and the remembered answer must
 * still be current (every generation of its cache key unchanged, or the user row unchanged). The
 * caller's roles and clients (and the API key it used) are part of the memory's key, so a role or
 * client change reaches the route again. Anything not known in process falls through to the route, which answers as always.
 */
@Injectable()
export class CachedAnswers {
  private readonly remembered = new LRUCache<string, Remembered>({ max: REMEMBERED_MAX });
  /** Each answer's UTF-8 bytes, encoded once while the answer itself is cached (not per request). */
  private readonly bytes = new WeakMap<CachedJson, Buffer>();
  /** Running totals read by the metrics module. */
  readonly stats = { served: 0 };

  /** Called by the route's interceptor after the guard let `user` through and the route answered. */
  remember(req: Request, user: AuthUser, answer: Remembered['again'], xCache: boolean): void {
    const route = typeof req.route?.path === 'string' ? `${req.baseUrl}${req.route.path as string}` : 'unmatched';
    this.remembered.set(callerKey(user, req.originalUrl), { again: answer, xCache, route });
  }

  /** The middleware; `authenticate` is the strategy's synchronous check (undefined: not known in process). */
  middleware(authenticate: (req: Request) => AuthUser | undefined) {
    return (req: Request, res: Response, next: NextFunction): void => {
      if (req.method !== 'GET' || this.remembered.size === 0) return next();
      if (req.headers.authorization === undefined && req.headers['x-api-key'] === undefined) return next();
      const user = authenticate(req);
      const remembered = user && this.remembered.get(callerKey(user, req.originalUrl));
      const answer = remembered && remembered.again();
      if (!remembered || !answer) return next();
      this.stats.served += 1;
      res.locals.routeTemplate = remembered.route;
      if (remembered.xCache) res.setHeader('X-Cache', 'HIT');
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('ETag', answer.etag);
      let body = this.bytes.get(answer);
      if (!body) this.bytes.set(answer, (body = Buffer.from(answer.json)));
      res.send(body);
    };
  }
}

/**
 * A request with an API key is its own caller (`k<key id>`): the key's scopes and clients narrow
 * what its owner's token may see, so an answer given to one never serves the other.
 */
function callerKey(user: AuthUser, url: string): string {
  const key = user.apiKey ? `k${user.apiKey.id}` : '';
  return `${user.id}|${user.roles.join(',')}|${user.clientIds.join(',')}|${key}|${url}`;
}
