import type { NextFunction, Request, Response } from 'express';
import { requestId } from '../logging/logging.module.js';

/**
 * Gives every request its id before anything else sees it: the first middleware of the app, so the
 * OpenAPI document, Swagger UI and its assets, /metrics, image bytes and 404s of unknown routes all
 * answer with `X-Request-ID` too, not only the routes behind the logging middleware. The id is the
 * client's X-Request-ID when it is 1–128 characters of `A-Z a-z 0-9 . _ : -`, else a fresh UUID.
 * The logger reuses `req.id`, so log lines carry the same id as the response header.
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const request = req as Request & { id?: string };
  request.id = requestId(req, res);
  next();
}
