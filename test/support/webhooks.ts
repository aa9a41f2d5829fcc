import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from './app.js';
import type { CreatedUser } from './factories.js';

export const WEBHOOKS = '/api/v1/webhooks';

/** Env of a test app delivering webhooks with short polls and retries (the rules themselves unchanged). */
export function webhookEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return { WEBHOOK_POLL_MS: '100', WEBHOOK_RETRY_MIN_MS: '200', WEBHOOK_RETRY_MAX_MS: '400', ...overrides };
}

export interface ReceivedRequest {
  /** Date.now() when the request's body had arrived. */
  receivedAt: number;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** What the receiver does with one request: answer a status (with headers), never answer, or stream a body without end. */
export type Behaviour =
  { status: number; body?: string; headers?: Record<string, string> } | 'hang' | { streamBytes: number };

/**
 * A real webhook receiver (node http on 127.0.0.1, a free port). `script` decides each answer by the
 * request's position (0-based); the default answers 200.
 */
export class TestReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Requests received and not yet answered (hanging ones, streams in progress). */
  open = 0;
  /** Bytes written by each streamed answer, and whether the client closed it before the end. */
  readonly streams: { written: number; cutOff: boolean }[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly hanging = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    public script: (request: ReceivedRequest, index: number) => Behaviour,
  ) {}

  static async start(script: (request: ReceivedRequest, index: number) => Behaviour = () => ({ status: 200 })) {
    const server = http.createServer();
    const receiver = new TestReceiver(server, script);
    server.on('request', (req, res) => void receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The ids received, in order (repeats included). */
  get ids(): string[] {
    return this.requests.map((r) => r.id);
  }

  /** Waits until `count` requests arrived (fails after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 15_000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.requests.length} of ${count} webhook requests after ${timeoutMs} ms`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, Math.min(left, 200));
        this.waiters.add(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
    return this.requests.slice(0, count);
  }

  /** Answers every hanging request with `status`. */
  release(status = 200): void {
    for (const res of this.hanging) if (!res.writableEnded) res.writeHead(status).end();
    this.hanging.clear();
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: ReceivedRequest = {
      receivedAt: Date.now(),
      id: String(req.headers['webhook-id']),
      timestamp: String(req.headers['webhook-timestamp']),
      signature: String(req.headers['webhook-signature']),
      body: Buffer.concat(chunks).toString('utf8'),
      headers: req.headers,
    };
    const behaviour = this.script(request, this.requests.length);
    this.requests.push(request);
    this.open++;
    res.on('close', () => this.open--);
    for (const wake of [...this.waiters]) wake();
    this.waiters.clear();
    if (behaviour === 'hang') this.hanging.add(res);
    else if ('streamBytes' in behaviour) await this.stream(res, behaviour.streamBytes);
    else
      res
        .writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers })
        .end(behaviour.body ?? 'ok');
  }

  private async stream(res: http.ServerResponse, total: number): Promise<void> {
    const record = { written: 0, cutOff: false };
    this.streams.push(record);
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 120);
    let closed = false;
    res.on('close', () => (closed = true));
    while (!closed && record.written < total) {
      record.written += chunk.length;
      if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    record.cutOff = closed && record.written < total;
    if (!closed) res.end();
  }
}

/** Verifies a request with the Standard Webhooks reference library; throws when no signature matches `secret`. */
export function verify(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': request.id,
    'webhook-timestamp': request.timestamp,
    'webhook-signature': request.signature,
  });
}

export interface CreatedWebhook {
  id: number;
  secret: string;
  body: Record<string, unknown>;
}

/** Creates a webhook through the API (201 expected). */
export async function createWebhook(
  t: TestApp,
  owner: CreatedUser,
  body: Record<string, unknown>,
): Promise<CreatedWebhook> {
  const res = await t
    .http()
    .post(WEBHOOKS)
    .set(owner.auth)
    .send({ event_types: ['tracker.status_changed'], ...body })
    .expect(201);
  return { id: res.body.id, secret: res.body.secret, body: res.body };
}

/** The delivery log of a webhook as the API answers it (newest first). */
export async function deliveriesOf(
  t: TestApp,
  owner: CreatedUser,
  webhookId: number,
  query = '',
): Promise<Record<string, unknown>[]> {
  const res = await t.http().get(`${WEBHOOKS}/${webhookId}/deliveries?limit=1000${query}`).set(owner.auth).expect(200);
  return res.body.items;
}
