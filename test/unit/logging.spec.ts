import { pinoHttp } from 'pino-http';
import { QueryFailedError } from 'typeorm';
import { describeStatement, serializeError } from '../../src/infrastructure/logging/error-serializer.js';
import { loggerParams, usePretty } from '../../src/infrastructure/logging/logger-options.js';

/** The logger nestjs-pino builds from these params (pino-http's), writing into an array. */
function capture(level: 'info' | 'debug', stdoutIsTTY = false) {
  const lines: string[] = [];
  const sink = { write: (text: string) => void lines.push(text) };
  const params = loggerParams(
    { logLevel: level, nodeEnv: stdoutIsTTY ? 'development' : 'production' },
    stdoutIsTTY,
    sink,
  );
  const [options, stream] = Array.isArray(params.pinoHttp) ? params.pinoHttp : [params.pinoHttp, sink];
  return { logger: pinoHttp(options as object, stream).logger, lines };
}

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA';
const INSERT = 'INSERT INTO "users"("name", "email", "password_hash") VALUES ($1, $2, $3) RETURNING "id"';

function failedInsert(): QueryFailedError {
  const driverError = Object.assign(
    new Error('null value in column "name" of relation "users" violates not-null constraint'),
    {
      code: '23502',
      severity: 'ERROR',
      table: 'users',
      column: 'name',
      routine: 'ExecConstraints',
      detail: `Failing row contains (7, null, marker@example.com, ${HASH}).`,
    },
  );
  return new QueryFailedError(INSERT, [null, 'marker@example.com', HASH], driverError);
}

describe('Logger: format chosen by environment and terminal', () => {
  it.each([
    ['development', true, true],
    ['development', false, false],
    ['production', true, false],
    ['test', true, false],
  ] as const)('NODE_ENV=%s, stdout a TTY: %s → human-readable: %s', (nodeEnv, tty, pretty) => {
    expect(usePretty({ nodeEnv }, tty)).toBe(pretty);
    expect(Array.isArray(loggerParams({ nodeEnv, logLevel: 'info' }, tty).pinoHttp)).toBe(pretty);
  });

  it('development on a terminal writes readable lines, not JSON', () => {
    const { logger, lines } = capture('info', true);
    logger.info({ context: 'NestApplication' }, 'Nest application successfully started');
    // eslint-disable-next-line no-control-regex -- colour codes are stripped to read the text
    const text = lines.join('').replace(/\u001b\[[0-9;]*m/g, '');
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toMatch(/\d\d:\d\d:\d\d\.\d{3}.*INFO.*\[NestApplication\] Nest application successfully started\n$/);
  });

  it("Nest's route mapping and module lines are debug, not info; other lines keep their level", () => {
    const atInfo = capture('info');
    atInfo.logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/clients, GET} route');
    atInfo.logger.info({ context: 'RoutesResolver' }, 'ClientsController {/api/v1/clients}:');
    atInfo.logger.info({ context: 'InstanceLoader' }, 'AppModule dependencies initialized');
    atInfo.logger.info({ context: 'NestApplication' }, 'Nest application successfully started');
    expect(atInfo.lines.map((l) => JSON.parse(l).msg)).toEqual(['Nest application successfully started']);

    const atDebug = capture('debug');
    atDebug.logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/clients, GET} route');
    expect(atDebug.lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 20, context: 'RouterExplorer', msg: 'Mapped {/api/v1/clients, GET} route' }),
    ]);
  });
});

describe('Logger: readable lines', () => {
  const readable = (entry: Record<string, unknown>) => {
    const { logger, lines } = capture('info', true);
    logger.info(entry, String(entry.msg ?? ''));
    // eslint-disable-next-line no-control-regex -- colour codes are stripped to read the text
    return lines.join('').replace(/\u001b\[[0-9;]*m/g, '');
  };

  it('a request: method, URL, status and duration', () => {
    const text = readable({
      req: { id: 'r-1', method: 'GET', url: '/api/v1/clients' },
      res: { statusCode: 200, headersSent: true },
      responseTime: 4,
      msg: 'request completed',
    });
    expect(text).toMatch(/INFO.*GET \/api\/v1\/clients 200 4 ms request completed/);
  });

  it('an error: message, SQLSTATE and its stack', () => {
    const { logger, lines } = capture('info', true);
    logger.error(
      { context: 'HttpExceptionFilter', err: Object.assign(new Error('boom'), { code: '23502' }) },
      'request failed with 500',
    );
    // eslint-disable-next-line no-control-regex -- as above
    const text = lines.join('').replace(/\u001b\[[0-9;]*m/g, '');
    expect(text).toMatch(/ERROR.*\[HttpExceptionFilter\] request failed with 500/);
    expect(text).toContain('23502');
    expect(text).toMatch(/Error: boom\n\s+at /);
  });
});

describe('Logger: database errors carry no SQL parameters', () => {
  it('a failed insert is logged with SQLSTATE, message and statement, without parameters, detail or query text', () => {
    const { logger, lines } = capture('info');
    logger.error({ err: failedInsert(), reqId: 'r-1' }, 'request failed with 500');
    const text = lines.join('');
    expect(text).not.toContain('argon2id');
    expect(text).not.toContain('marker@example.com');
    expect(text).not.toContain('Failing row');
    expect(text).not.toContain('VALUES');
    const { err } = JSON.parse(text) as { err: Record<string, unknown> };
    expect(err).toMatchObject({
      type: 'QueryFailedError',
      code: '23502',
      message: 'null value in column "name" of relation "users" violates not-null constraint',
      table: 'users',
      column: 'name',
      statement: describeStatement(INSERT).statement,
      operation: 'INSERT INTO "users"',
    });
    expect(Object.keys(err)).not.toEqual(expect.arrayContaining(['parameters']));
  });

  it("pg's own error (no TypeORM wrapper) loses its detail too; other errors keep their fields", () => {
    const pgError = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      code: '23505',
      severity: 'ERROR',
      constraint: 'users_email_key',
      detail: 'Key (email)=(marker@example.com) already exists.',
    });
    expect(serializeError(pgError)).toMatchObject({ code: '23505', constraint: 'users_email_key' });
    expect(JSON.stringify(serializeError(pgError))).not.toContain('marker@example.com');
    const fsError = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT', path: '/data/uploads/x' });
    expect(serializeError(fsError)).toMatchObject({ code: 'ENOENT', path: '/data/uploads/x' });
  });

  it('the statement name is the one prepared statements get; literals and numbers never reach the operation', () => {
    expect(describeStatement('SELECT 1')).toEqual({
      statement: expect.stringMatching(/^q_[0-9a-f]{20}$/),
      operation: 'SELECT ?',
    });
    expect(describeStatement("UPDATE users SET name = 'secret' WHERE id = 42").operation).toBe(
      'UPDATE users SET name = ? WHERE id = ?',
    );
  });
});
