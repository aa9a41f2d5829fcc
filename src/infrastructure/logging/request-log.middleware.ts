import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** Liveness probes poll this every few seconds; their lines would drown the rest. */
const UNLOGGED_URL = '/api/v1/health/basic';

/**
 * One JSON line per request when its response is finished or the connection closes first: `req`
 * (id, method, URL, client address), `res` (status), `responseTime` in ms — the line pino-http
 * writes, with its messages and levels (error for 5xx, warn for 4xx, else info).
 *
 * Written through the application's one pino logger, with no child logger and no async context
 * per request: building both for every request cost as much CPU as the rest of a cached answer.
 * Logs written while handling a request name its id themselves (the exception filter does).
 */
export function requestLogMiddleware(appLogger: Logger) {
  // A request line holds only what its serializers pick (no body, no headers): the redaction paths
  // have nothing to find in it, and walking them was a tenth of the line's cost.
  const logger = appLogger.child({}, { redact: { paths: [] } });
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (req.url !== UNLOGGED_URL) {
      const started = Date.now();
      const done = () => {
        res.removeListener('finish', done);
        res.removeListener('close', done);
        writeLine(logger, req, res, Date.now() - started);
      };
      res.on('finish', done);
      res.on('close', done);
    }
    next();
  };
}

function writeLine(logger: Logger, req: IncomingMessage, res: ServerResponse, responseTime: number): void {
  const status = res.statusCode;
  if (status >= 500) {
    logger.error({ req, res, err: new Error(`failed with status code ${status}`), responseTime }, 'request errored');
    return;
  }
  const level = status >= 400 ? 'warn' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const message = !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted';
  logger[level]({ req, res, responseTime }, message);
}
