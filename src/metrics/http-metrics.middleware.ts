import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service.js';

/**
 * Times every request until its response is finished, labelled by the matched route template
 * (`/api/v1/trackers/:id`, never the raw path, so labels stay few). Middleware rather than an
 * interceptor so requests stopped by the guard, the validation pipe or the exception filter count
 * too; mounted on the whole app by configureApp.
 */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const started = process.hrtime.bigint();
    this.metrics.requestStarted();
    // 'close' comes for every response, answered or aborted; 'finish' only for answered ones.
    res.once('close', () => this.metrics.requestEnded());
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.observeRequest(req.method, routeTemplate(req, res), res.statusCode, seconds);
    });
    next();
  }
}

/**
 * The matched route pattern (or the one an answer served before routing stands for), or `unmatched`
 * for paths no route declares (static files, and Nest's catch-all 404 route, whose pattern is a wildcard).
 */
function routeTemplate(req: Request, res: Response): string {
  const served = (res.locals as { routeTemplate?: unknown }).routeTemplate;
  if (typeof served === 'string') return served;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string' || path.includes('*')) return 'unmatched';
  return `${req.baseUrl}${path}`;
}
