import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';

/** A result read from the cache (`hit`) or computed and stored (miss); services return it for cached reads. */
export class Cached<T> {
  constructor(
    readonly value: T,
    readonly hit: boolean,
  ) {}
}

/**
 * Answers a handler's `Cached` result with its value and `X-Cache: HIT|MISS`, so cached routes
 * say where their answer came from without the controller touching the response.
 */
@Injectable()
export class CacheHeaderInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Cached)) return result;
        context.switchToHttp().getResponse<Response>().setHeader('X-Cache', result.hit ? 'HIT' : 'MISS');
        return result.value;
      }),
    );
  }
}
