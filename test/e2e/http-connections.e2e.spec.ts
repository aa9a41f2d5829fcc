import type { AddressInfo, Server } from 'node:net';
import { connect, type Socket } from 'node:net';
import { createTestApp, type TestApp } from '../support/app.js';

const BOUND_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw client connection that records what it received and when the server closed it. */
interface Probe {
  socket: Socket;
  received: () => string;
  closedAfter: () => number | undefined;
}

function open(port: number): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let received = '';
    let closedAt: number | undefined;
    const socket = connect(port, '127.0.0.1', () =>
      resolve({
        socket,
        received: () => received,
        closedAfter: () => (closedAt === undefined ? undefined : closedAt - started),
      }),
    );
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => (closedAt = Date.now()));
    socket.on('error', reject);
  });
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await sleep(20);
}

describe('HTTP connections: a silent connection is closed (HTTP_FIRST_BYTE_TIMEOUT_MS)', () => {
  let t: TestApp;
  let port: number;
  const probes: Probe[] = [];
  const probe = async () => {
    const p = await open(port);
    probes.push(p);
    return p;
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { HTTP_FIRST_BYTE_TIMEOUT_MS: String(BOUND_MS) } });
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const p of probes) p.socket.destroy();
    await t?.close();
  });

  it('closes a connection that sends nothing once the bound has passed', async () => {
    const idle = await probe();
    await until(() => idle.closedAfter() !== undefined, 3000);
    expect(idle.closedAfter()).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(idle.closedAfter()).toBeLessThan(2000);
    expect(idle.received()).toBe('');
  });

  it('closes a connection that stops in the middle of its request headers', async () => {
    const stalled = await probe();
    stalled.socket.write('GET /api/v1/nope HTTP/1.1\r\nHost: x\r\n');
    await until(() => stalled.closedAfter() !== undefined, 3000);
    expect(stalled.closedAfter()).toBeLessThan(2000);
  });

  it('serves a request whose headers arrive slowly but steadily', async () => {
    const slow = await probe();
    const request = 'GET /api/v1/nope HTTP/1.1\r\nHost: x\r\nX-Request-ID: slow-1\r\n\r\n';
    // Each gap is under the bound; together they take several times longer.
    for (const piece of request.match(/[\s\S]{1,8}/g) ?? []) {
      slow.socket.write(piece);
      await sleep(BOUND_MS / 3);
    }
    await until(() => slow.received().includes('"detail"'), 3000);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 404 /);
    expect(slow.received()).toContain('X-Request-ID: slow-1');
  });

  it('does not bound a request once its headers are in (a body may pause longer)', async () => {
    const paused = await probe();
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' });
    paused.socket.write(
      `POST /api/v1/auth/login/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    paused.socket.write(body.slice(0, 10));
    await sleep(BOUND_MS * 3);
    expect(paused.closedAfter()).toBeUndefined();
    paused.socket.write(body.slice(10));
    await until(() => paused.received().includes('"detail"'), 3000);
    expect(paused.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(paused.received()).toContain('Incorrect email or password');
  });

  it('keeps an idle keep-alive connection for the keep-alive timeout as before (5 s), not the first-byte bound', async () => {
    expect((t.app.getHttpServer() as { keepAliveTimeout: number }).keepAliveTimeout).toBe(5000);
    const kept = await probe();
    kept.socket.write('GET /api/v1/nope HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => kept.received().includes('"detail"'), 3000);
    await sleep(BOUND_MS * 4);
    expect(kept.closedAfter()).toBeUndefined();
    kept.socket.write('GET /api/v1/nope HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => kept.received().split('HTTP/1.1 404').length === 3, 3000);
    await until(() => kept.closedAfter() !== undefined, 8000);
    expect(kept.closedAfter()).toBeGreaterThan(5000);
  });
});

describe('HTTP connections: default bound', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('gives each new connection 30 s to send its first request', async () => {
    const server = t.app.getHttpServer() as Server;
    const seen = new Promise<number | undefined>((resolve) =>
      server.once('connection', (socket: Socket) => setImmediate(() => resolve(socket.timeout))),
    );
    await t.http().get('/api/v1/nope').expect(404);
    expect(await seen).toBe(30_000);
  });
});
