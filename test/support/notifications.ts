import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app.js';

/** The events the database recorded for a tracker, oldest first, as stored. */
export async function eventsOf(t: TestApp, trackerId: number): Promise<Record<string, unknown>[]> {
  return t.db.query(
    `SELECT id::int, type, tracker_id, tracker_name, production_run_id, client_id, from_status, to_status, source,
            status_entry_id::int, storage_location_id, delivery_location_id, occurred_at, created_at
       FROM notification_events WHERE tracker_id = $1 ORDER BY id`,
    [trackerId],
  );
}

/** from → to of each event of a tracker, oldest first. */
export async function transitions(t: TestApp, trackerId: number): Promise<string[]> {
  return (await eventsOf(t, trackerId)).map((e) => `${e.from_status}>${e.to_status}`);
}

export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: unknown;
}

/** A Server-Sent Events response read as it arrives. */
export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Parsed events so far. */
  events: SseEvent[];
  /** Comment lines so far (without the leading colon and space). */
  comments: string[];
  /** Body text of a non-200 answer, once ended. */
  body: () => string;
  /** Resolves when the server ends the response (or the connection drops). */
  ended: Promise<void>;
  /** Waits until `count` events arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

/** Starts the app's HTTP server on a free port (once) and returns its base URL. */
export async function listening(t: TestApp): Promise<string> {
  const server = t.app.getHttpServer() as http.Server;
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Opens GET /api/v1/notifications/stream (query and headers as given) and parses the event stream. */
export function openStream(
  base: string,
  options: { headers?: Record<string, string>; query?: string } = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}/api/v1/notifications/stream${options.query ? `?${options.query}` : ''}`,
      { headers: options.headers ?? {} },
      (res) => {
        const events: SseEvent[] = [];
        const comments: string[] = [];
        let raw = '';
        let buffer = '';
        const waiters: (() => void)[] = [];
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          raw += chunk;
          buffer += chunk;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else {
                const at = line.indexOf(':');
                fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, '');
              }
            }
            if (fields.data !== undefined)
              events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
          }
          for (const wake of waiters.splice(0)) wake();
        });
        const ended = new Promise<void>((done) => {
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        });
        void ended.then(() => {
          for (const wake of waiters.splice(0)) wake();
        });
        let isEnded = false;
        void ended.then(() => (isEnded = true));
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          comments,
          body: () => raw,
          ended,
          async waitFor(count, timeoutMs = 3000) {
            const deadline = Date.now() + timeoutMs;
            while (events.length < count) {
              if (isEnded) throw new Error(`stream ended with ${events.length} of ${count} events`);
              const left = deadline - Date.now();
              if (left <= 0) throw new Error(`${events.length} of ${count} events after ${timeoutMs} ms`);
              await new Promise<void>((wake) => {
                const timer = setTimeout(wake, left);
                waiters.push(() => {
                  clearTimeout(timer);
                  wake();
                });
              });
            }
            return events.slice(0, count);
          },
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
  });
}

/** Resolves true when `promise` settles within `ms`, else false. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(
    () => true,
    () => true,
  );
  const result = await Promise.race([settled, timeout]);
  clearTimeout(timer);
  return result;
}
