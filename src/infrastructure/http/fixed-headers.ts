import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A middleware that sets the same headers on every response (helmet's are fixed once the config
 * is known), turned into one loop over precomputed pairs: it runs once against a recording
 * response at start, instead of a chain of middlewares per request.
 */
export function fixedHeaders(middleware: RequestHandler): RequestHandler {
  const recorded = new Map<string, { name: string; value: string | number | readonly string[] }>();
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      recorded.set(name.toLowerCase(), { name, value });
      return recorder;
    },
    getHeader: (name: string) => recorded.get(name.toLowerCase())?.value,
    removeHeader: (name: string) => void recorded.delete(name.toLowerCase()),
  };
  let passed = false;
  middleware(
    { method: 'GET', url: '/', headers: {} } as Request,
    recorder as unknown as Response,
    () => (passed = true),
  );
  // A middleware that answers by itself, or depends on the request, cannot be recorded.
  if (!passed) throw new Error('fixedHeaders: the middleware did not pass the request on');
  const headers = [...recorded.values()];
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const { name, value } of headers) res.setHeader(name, value);
    next();
  };
}
