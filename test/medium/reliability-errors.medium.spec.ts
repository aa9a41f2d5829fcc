import net from 'node:net';
import pg from 'pg';
import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from '../../src/infrastructure/database/sql-state.js';
import { FaultProxy } from '../support/fault-proxy.js';

/**
 * The errors pg really produces when the database goes away, captured from real sockets (no
 * PostgreSQL needed), must all be classed "unavailable" (→ 503), bare and wrapped by TypeORM.
 */
async function captured(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

function expectUnavailable(error: Error) {
  expect(isDatabaseUnavailable(error)).toBe(true);
  expect(isDatabaseUnavailable(new QueryFailedError('SELECT 1', [], error))).toBe(true);
}

describe('database-unavailable errors (exception filter → 503)', () => {
  let silent: net.Server;
  let closing: net.Server;
  const silentSockets = new Set<net.Socket>();
  let silentPort: number;
  let closingPort: number;

  beforeAll(async () => {
    // Accepts and never answers (a hung server); accepts and hangs up (a server going down).
    silent = net.createServer((socket) => silentSockets.add(socket));
    closing = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as net.AddressInfo).port;
    closingPort = (closing.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    for (const socket of silentSockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await new Promise((resolve) => closing.close(resolve));
  });

  const client = (port: number, extra: pg.ClientConfig = {}) =>
    new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x', ...extra });

  it('refused connection (server stopped)', async () => {
    const proxy = await FaultProxy.start({ port: closingPort });
    await proxy.cut();
    const error = await captured(() => client(proxy.port).connect());
    await proxy.close();
    expect((error as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expectUnavailable(error);
  });

  it('connection closed by the server', async () => {
    const error = await captured(() => client(closingPort).connect());
    expect(error.message).toMatch(/Connection terminated unexpectedly/);
    expectUnavailable(error);
  });

  it('connect timeout of a new connection, and of a checkout waiting for a busy pool (silent server)', async () => {
    const pool = new pg.Pool({
      host: '127.0.0.1',
      port: silentPort,
      user: 'x',
      database: 'x',
      max: 1,
      connectionTimeoutMillis: 300,
    });
    const [connecting, queued] = await Promise.all([
      captured(() => pool.query('SELECT 1')),
      captured(() => pool.query('SELECT 1')),
    ]);
    await pool.end();
    expect(connecting.message).toMatch(/Connection terminated due to connection timeout/);
    expect(queued.message).toMatch(/timeout exceeded when trying to connect/);
    expectUnavailable(connecting);
    expectUnavailable(queued);
  });

  it('connection lost under an open client, then used again (real PostgreSQL behind the fault proxy)', async () => {
    const proxy = await FaultProxy.forUrl(process.env.TEST_PG_ADMIN_URL as string);
    const c = new pg.Client({ connectionString: proxy.rewrite(process.env.TEST_PG_ADMIN_URL as string) });
    c.on('error', () => undefined);
    await c.connect();
    const running = captured(() => c.query('SELECT pg_sleep(5)'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await proxy.cut();
    const inFlight = await running;
    const afterwards = await captured(() => c.query('SELECT 1'));
    await proxy.close();
    expect(inFlight.message).toMatch(/Connection terminated unexpectedly/);
    expect(afterwards.message).toMatch(/not queryable/);
    expectUnavailable(inFlight);
    expectUnavailable(afterwards);
  });

  it('checkouts refused by the database guard', () => {
    expectUnavailable(Object.assign(new Error('database unreachable (liveness probe failing)'), { code: '08006' }));
    expectUnavailable(Object.assign(new Error('database connection pool exhausted'), { code: '53300' }));
  });

  it('leaves ordinary failures alone', () => {
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
    expect(
      isDatabaseUnavailable(
        new QueryFailedError('SELECT', [], Object.assign(new Error('syntax error'), { code: '42601' })),
      ),
    ).toBe(false);
  });
});
