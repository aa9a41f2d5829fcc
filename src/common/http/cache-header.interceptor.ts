import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import type { CachedJson } from '../../infrastructure/cache/tiered-cache.js';

/**
 * A cached answer (`hit`) or one computed and stored (miss), as the JSON text to send; services
 * return it for cached reads. `T` is the shape the text holds (what the route documents).
 */
export class Cached<T> {
  declare private readonly shape?: T;

  constructor(
    readonly body: CachedJson,
    readonly hit: boolean,
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
 * controller touching the response.
 */
@Injectable()
export class CacheHeaderInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Cached)) return result;
        const res = context.switchToHttp().getResponse<Response>();
        res.setHeader('X-Cache', result.hit ? 'HIT' : 'MISS');
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('ETag', result.body.etag);
        return result.body.json;
      }),
    );
  }
}
