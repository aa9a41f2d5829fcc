import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { resolve } from 'node:path';
import { databaseUrl } from './database.js';
import { TEST_JWT_SECRET } from './test-config.js';

/** `npm start` runs dist/; build it when sources are newer (cached between runs). */
export function buildIfNeeded(): void {
  execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], { stdio: 'pipe' });
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** True when a TCP connection to 127.0.0.1:port is refused. */
export function refused(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stdout+stderr match `pattern`; rejects (with the output) on exit or timeout. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void>;
  /** SIGTERM, then SIGKILL, to the whole process group (for afterAll). */
  cleanup(): Promise<void>;
  /** Sends `signal` to the process and waits for the exit (at most `timeoutMs`; then resolves with `null`). */
  stop(
    signal?: NodeJS.Signals,
    timeoutMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null } | null>;
}

/** The built service (`node dist/src/main.js`, or `command`) as a child process with exactly `env` (+ PATH). */
export function spawnService(
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
  command?: string[],
): ServiceProcess {
  const [file, ...args] = command ?? [process.execPath, resolve(cwd, 'dist/src/main.js')];
  // Its own process group, so that cleanup() reaches whatever it started (npm's script included).
  const child = spawn(file, args, {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    listeners.forEach((l) => l());
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    listeners.forEach((l) => l());
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    // 'close': the exit status once every output line has been read.
    child.once('close', (code, signal) => done({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForOutput(pattern, timeoutMs) {
      return new Promise<void>((done, fail) => {
        const check = () => {
          if (!pattern.test(out + err)) return;
          cleanup();
          done();
        };
        const timer = setTimeout(() => {
          cleanup();
          fail(new Error(`no ${pattern} within ${timeoutMs} ms:\n${out}${err}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then(({ code }) => {
          if (!listeners.has(check)) return;
          cleanup();
          fail(new Error(`exited (${code}) before ${pattern}:\n${out}${err}`));
        });
        check();
      });
    },
    async cleanup() {
      const group = (signal: NodeJS.Signals) => {
        try {
          if (child.pid) process.kill(-child.pid, signal);
        } catch {
          // the group is gone
        }
      };
      group('SIGTERM');
      if ((await this.stop('SIGTERM', 10_000)) === null) group('SIGKILL');
    },
    async stop(signal = 'SIGTERM', timeoutMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((done) => (timer = setTimeout(() => done(null), timeoutMs)));
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The built service in production mode on `database` (no DATABASE_URL magic, no demo data), with
 * a known admin, listening on `port`.
 */
export function spawnProductionService(options: {
  database: string;
  dataDir: string;
  port: number;
  admin: { email: string; password: string };
  logLevel: string;
}): ServiceProcess {
  return spawnService({
    NODE_ENV: 'production',
    PORT: String(options.port),
    DATABASE_URL: databaseUrl(options.database),
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: options.dataDir,
    ADMIN_EMAIL: options.admin.email,
    ADMIN_PASSWORD: options.admin.password,
    SEED_DEMO_DATA: 'false',
    LOG_LEVEL: options.logLevel,
  });
}
