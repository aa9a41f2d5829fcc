import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, hostOf, isPublicAddress, RefusedTarget } from './webhook-target.js';

/** A 2xx answer within this long is a successful delivery; the whole attempt never lasts longer. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Of a response body at most this much is read (the rest is cut off with the connection). */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** Of a failed answer's body, at most this much goes into the delivery's error. */
const ERROR_EXCERPT_CHARS = 500;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Refuse non-public addresses (checked on the resolved addresses the socket then connects to). */
  refusePrivateTargets: boolean;
  /** Ends the attempt at once (shutdown): a failed attempt, retried later. */
  signal?: AbortSignal;
}

export interface SendResult {
  /** The HTTP status, when an answer arrived in time. */
  status: number | null;
  timeMs: number;
  /** Null on success; otherwise what went wrong, for the delivery log. */
  error: string | null;
  /** The target's address was refused (no request was sent). */
  refused: boolean;
}

/**
 * POSTs one signed delivery. Never follows redirects (a 3xx is a failed attempt), never waits longer
 * than DELIVERY_TIMEOUT_MS in all (DNS, connect, TLS, answer), and reads at most MAX_RESPONSE_BYTES
 * of the answer: a receiver streaming without end is cut off. One connection per attempt (no
 * keep-alive): a reused socket the receiver closed meanwhile would count as a failed attempt.
 */
export function send(request: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const target = new URL(request.url);
  const host = hostOf(target);
  const elapsed = () => Math.round(performance.now() - started);
  if (request.refusePrivateTargets && isIP(host) && !isPublicAddress(host))
    return Promise.resolve({
      status: null,
      timeMs: 0,
      error: `refused: ${host} is a loopback, private, link-local or unspecified address`,
      refused: true,
    });
  return new Promise((resolve) => {
    let status: number | null = null;
    let excerpt = '';
    let settled = false;
    const finish = (error: string | null, refused = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', stopped);
      req.destroy();
      const ok = error === null && status !== null && status >= 200 && status < 300;
      resolve({ status, timeMs: elapsed(), error: ok ? null : (error ?? answerError(status, excerpt)), refused });
    };
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(
      target,
      {
        method: 'POST',
        agent: false,
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        ...(request.refusePrivateTargets ? { lookup: guardedLookup } : {}),
      },
      (res) => {
        status = res.statusCode ?? null;
        const redirect = status !== null && status >= 300 && status < 400;
        if (redirect) excerpt = `redirect to ${(res.headers.location ?? '(no location)').slice(0, 200)} not followed`;
        let read = 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          read += Buffer.byteLength(chunk);
          if (!redirect && excerpt.length < ERROR_EXCERPT_CHARS)
            excerpt += chunk.slice(0, ERROR_EXCERPT_CHARS - excerpt.length);
          // Enough: the answer's status decides, the body is only kept for the log.
          if (read >= MAX_RESPONSE_BYTES) finish(null);
        });
        res.on('end', () => finish(null));
        res.on('error', () => finish(null));
        res.on('aborted', () => finish(null));
      },
    );
    const timer = setTimeout(
      () => finish(status === null ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : null),
      DELIVERY_TIMEOUT_MS,
    );
    req.on('error', (error) => finish(describe(error), error instanceof RefusedTarget));
    const stopped = () => finish(status === null ? 'the service stopped before the receiver answered' : null);
    if (request.signal?.aborted) stopped();
    request.signal?.addEventListener('abort', stopped, { once: true });
    req.end(request.body);
  });
}

function answerError(status: number | null, excerpt: string): string {
  if (status === null) return 'no answer';
  const text = excerpt.replace(/\s+/g, ' ').trim().slice(0, ERROR_EXCERPT_CHARS);
  return text ? `HTTP ${status}: ${text}` : `HTTP ${status}`;
}

function describe(error: Error & { code?: string }): string {
  if (error instanceof RefusedTarget) return error.message;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
