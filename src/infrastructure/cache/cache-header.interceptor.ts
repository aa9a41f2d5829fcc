import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';
import { CachedAnswers } from './cached-answers.js';
import type { CachedJson } from './tiered-cache.js';
import type { AuthUser } from '../../common/auth/auth-user.js';

/**
 * A cached answer (`hit`) or one computed and stored (miss), as the JSON text to send; services
 * return it for cached reads. `T` is the shape the text holds (what the route documents).
 */
export class Cached<T> {
  declare private readonly shape?: T;

  /**
   * `hit`: whether the answer came from the cache (`X-Cache`), or null for a route that does not
   * say. `again`: the same answer while it is current, found synchronously (see CachedAnswers).
   */
  constructor(
    readonly body: CachedJson,
    readonly hit: boolean | null,
    readonly again?: () => CachedJson | undefined,
  ) {}

  /** The answer as an object (parsed from the text: for callers other than the HTTP response). */
  get value(): T {
    return JSON.parse(this.body.json) as T;
  }
}

/**
 * Answers a handler's `Cached` result with its JSON text as it is — no serialization per request —
 * with `X-Cache: HIT|MISS` and the ETag computed when the text was cached (the one Express would
 * compute for the same body), so cached routes say where their answer came from without the
 * controller touching the response. An answer that can be found again is remembered for the
 * caller and URL, so the next identical request is answered before routing (CachedAnswers).
 */
@Injectable()
export class CacheHeaderInterceptor implements NestInterceptor {
  constructor(private readonly answers: CachedAnswers) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Cached)) return result;
        const http = context.switchToHttp();
        const res = http.getResponse<Response>();
        const req = http.getRequest<Request & { user?: AuthUser }>();
        if (result.again && req.user && req.method === 'GET')
          this.answers.remember(req, req.user, result.again, result.hit !== null);
        if (result.hit !== null) res.setHeader('X-Cache', result.hit ? 'HIT' : 'MISS');
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('ETag', result.body.etag);
        return result.body.json;
      }),
    );
  }
}
