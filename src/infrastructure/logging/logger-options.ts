import type { Params } from 'nestjs-pino';
import type { Logger, LogFn } from 'pino';
import type { AppConfig } from '../../common/config/app-config.js';
import { serializeError } from './error-serializer.js';
import { prettyFactory } from 'pino-pretty';
import { redactUrl } from './redact-url.js';
import { requestId } from './request-id.js';

/** Nest's start-up chatter (a line per module and per route): kept, but at debug. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);
const INFO = 30;

/**
 * The logger: pino JSON lines on stdout, except in development on a terminal, where each line is
 * written human-readable. Credentials are redacted wherever they could appear; errors go through
 * serializeError (no SQL parameters).
 */
export function loggerParams(
  config: Pick<AppConfig, 'logLevel' | 'nodeEnv'>,
  stdoutIsTTY: boolean,
  stdout: { write(text: string): unknown } = process.stdout,
): Params {
  const options = {
    level: config.logLevel,
    genReqId: requestId,
    // A request line names the request, not its headers: what is logged once per request is kept
    // small (it is serialized and redacted on every request), and credentials in headers never
    // reach a log in the first place.
    serializers: { err: serializeError, req: requestFields, res: responseFields },
    // The serializers get the objects as logged (pino-http's wrappers would first copy every request
    // header into a new object on each request line, only for requestFields to drop them).
    wrapSerializers: false,
    redact: {
      paths: ['*.password', '*.current_password', '*.refresh_token', '*.access_token'],
      censor: '[redacted]',
    },
    hooks: {
      logMethod(this: Logger, args: Parameters<LogFn>, method: LogFn, level: number) {
        const context = (args[0] as { context?: unknown } | null)?.context;
        if (level === INFO && typeof context === 'string' && BOOT_CONTEXTS.has(context)) {
          this.debug(...args);
          return;
        }
        method.apply(this, args);
      },
    },
    // Request lines are written by requestLogMiddleware, not by pino-http's per-request child loggers.
    autoLogging: false,
  } satisfies Exclude<Params['pinoHttp'], unknown[] | undefined>;
  if (usePretty(config, stdoutIsTTY)) return { pinoHttp: [options, prettyStream(stdout)] };
  return { pinoHttp: options };
}

/** What a request line says about the request (input: the request as logged); credentials in its query redacted. */
function requestFields(req: {
  id?: unknown;
  method?: string;
  url?: string;
  originalUrl?: string;
  socket?: { remoteAddress?: string };
}): object {
  const url = req.originalUrl ?? req.url;
  return {
    id: req.id,
    method: req.method,
    url: url === undefined ? url : redactUrl(url),
    remoteAddress: req.socket?.remoteAddress,
  };
}

function responseFields(res: { statusCode?: number }): object {
  return { statusCode: res.statusCode };
}

/** Human-readable lines only for a person at a terminal in development; JSON everywhere else. */
export function usePretty(config: Pick<AppConfig, 'nodeEnv'>, stdoutIsTTY: boolean): boolean {
  return config.nodeEnv === 'development' && stdoutIsTTY;
}

/**
 * pino-pretty's formatter writing to `out`, line by line: `14:02:15.004 INFO (NestApplication): …`, a request
 * as `GET /api/v1/clients 200 4 ms`, an error with its stack below.
 */
function prettyStream(out: { write(text: string): unknown }): { write(line: string): void } {
  const format = prettyFactory({
    colorize: !process.env.NO_COLOR,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context,req,res,responseTime',
    messageKey: 'msg',
    messageFormat: (log, messageKey) => {
      const context = typeof log.context === 'string' ? `[${log.context}] ` : '';
      const req = log.req as { method?: string; url?: string } | undefined;
      const res = log.res as { statusCode?: number } | undefined;
      const request = req?.method
        ? `${req.method} ${req.url} ${res?.statusCode ?? ''} ${String(log.responseTime ?? '')} ms `
        : '';
      return `${context}${request}${String(log[messageKey] ?? '')}`;
    },
  });
  return { write: (line) => void out.write(format(line)) };
}
