import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';

interface ExpressPrototypes {
  request: object;
  response: object;
}

/**
 * Express 5 gives every request and response its own prototypes (`app.request`/`app.response`)
 * with `Object.setPrototypeOf` as it enters the app. V8 pays for that change of shape long after
 * the request: each request's objects then survived young-generation collections (a quarter of
 * what was allocated), so every scavenge copied megabytes and paused the event loop 4–5 ms —
 * most of this service's p99 latency. This adapter lets the HTTP server construct requests and
 * responses with those prototypes from the start; Express's swap is then a no-op (scavenges back to
 * ~0.3 ms; measured in docs/performance.md). Everything else is the stock adapter.
 */
export class ExpressHttpAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    const classes = expressMessageClasses(this.getInstance<ExpressPrototypes>());
    // The stock server for what this adapter does not reimplement (HTTPS, Nest's closing modes).
    if (!classes || options.httpsOptions || options.return503OnClosing || options.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    this.httpServer = createServer(classes, this.getInstance());
  }

  /**
   * No body parsers as middleware: bodies are read after the guard, with each route's own limit
   * (src/common/http/request-body.interceptor.ts, installed by configureApp).
   */
  override registerParserMiddleware(): void {}

  /**
   * Nest answers unknown paths with its JSON 404 only under the global prefix (and on the excluded
   * routes' own paths); everything else (`/`, `/api`, `/docs/x`, `POST /foo`) would reach Express's
   * HTML 404 page. The same handler is mounted once more at the root, last in the stack, so every
   * unmatched request anywhere goes through the exception filter as `404 {"detail":"Not Found"}`.
   */
  override setNotFoundHandler(...args: Parameters<ExpressAdapter['setNotFoundHandler']>): unknown {
    const [handler, prefix] = args;
    const result: unknown = super.setNotFoundHandler(...args);
    // Without a prefix the stock handler is already mounted at the root.
    if (prefix && prefix.replace(/^\/+|\/+$/g, '') !== '') this.use(handler);
    return result;
  }
}

/**
 * Request/response constructors whose instances start with Express's prototypes (which inherit from
 * IncomingMessage/ServerResponse, so `instanceof` still holds). Null when Node's own constructors
 * are ES classes, which cannot be called this way; the stock server is used then.
 */
function expressMessageClasses(
  app: ExpressPrototypes,
): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } | null {
  const isClass = (fn: unknown) => /^class\b/.test(Function.prototype.toString.call(fn));
  if (isClass(IncomingMessage) || isClass(ServerResponse)) return null;
  // Node's constructors as the plain functions they are (checked above).
  const initRequest = IncomingMessage as unknown as (this: IncomingMessage, socket: unknown) => void;
  const initResponse = ServerResponse as unknown as (this: ServerResponse, req: unknown, options: unknown) => void;
  function ExpressRequest(this: IncomingMessage, socket: unknown): void {
    initRequest.call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: ServerResponse, req: unknown, options: unknown): void {
    initResponse.call(this, req, options);
  }
  ExpressResponse.prototype = app.response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof ServerResponse,
  };
}
