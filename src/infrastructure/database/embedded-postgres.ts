import { spawn } from 'node:child_process';
import { chownSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import pg from 'pg';
import sql from 'sql-template-tag';
import { errnoCode, StartupError } from '../../common/errors/startup-error.js';
import { clearLeftoverPostgres } from './embedded-postgres-leftover.js';
import { DEFAULT_RUNTIME_DIR, placeCluster, prepareClusterDir, type Placement } from './embedded-postgres-placement.js';

const SUPERUSER = 'postgres';
// Only reachable on 127.0.0.1 (no Unix socket): the password keeps other local users out.
const PASSWORD = 'postgres';
const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

interface EmbeddedPostgresOptions {
  dataDir: string;
  /** The cluster's directory name under DATA_DIR (`postgres`; the tests use `test-postgres`). */
  name: string;
  port: number;
  /** The variable that sets `port`, named in the hint when the port is taken. */
  portVariable?: string;
  /** Where a root start places what the database user cannot reach (see embedded-postgres-placement.ts). */
  runtimeDir?: string;
  /** Created when missing; the returned URL points at it. */
  database?: string;
  /** Extra `postgres` arguments, e.g. ['-c', 'fsync=off']. */
  flags?: string[];
  log?: (message: string) => void;
}

export interface EmbeddedDatabase {
  url: string;
  clusterDir: string;
  /** Fast shutdown; resolves once PostgreSQL has exited. */
  stop(): Promise<void>;
}

/**
 * Runs PostgreSQL from the binaries of the `embedded-postgres` package (initialised once, reused
 * after) and returns its URL. Every failure the operator can fix — the port taken, a data directory
 * that cannot be written, initdb failing — is a StartupError with one plain line.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  const placement = await placeCluster(options.dataDir, options.name, options.runtimeDir ?? DEFAULT_RUNTIME_DIR);
  const { clusterDir, user } = placement;
  prepareClusterDir(placement);
  log(
    `Embedded PostgreSQL on 127.0.0.1:${options.port}, data in ${clusterDir}${user ? ` (runs as user ${user.name})` : ''}`,
  );
  for (const note of placement.notes) log(`  ${note}`);
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    log('  initialising the cluster (first start)');
    await initialise(placement);
  }
  const leftover = await clearLeftoverPostgres(clusterDir);
  if (leftover) log(`  ${leftover}`);
  const server = await launch(placement, options);
  const database = options.database ?? 'postgres';
  try {
    await ensureDatabase(options.port, database);
  } catch (error) {
    await server.stop();
    throw new StartupError(
      `embedded PostgreSQL in ${clusterDir} started but cannot be used (${(error as Error).message}): if the cluster comes from elsewhere, move it away and start again`,
    );
  }
  return {
    url: `postgres://${SUPERUSER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`,
    clusterDir,
    stop: server.stop,
  };
}

function spawnOptions(placement: Placement) {
  // Messages in English, so that the failures below can be recognised.
  const env = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' };
  return placement.user ? { env, uid: placement.user.uid, gid: placement.user.gid } : { env };
}

async function initialise(placement: Placement): Promise<void> {
  const { binaries, clusterDir, user } = placement;
  // initdb reads the password from a file; beside the cluster is a place the database user can reach.
  const passwordFile = join(dirname(clusterDir), `.${basename(clusterDir)}.initdb-password`);
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (user) chownSync(passwordFile, user.uid, user.gid);
  try {
    const args = [
      `--pgdata=${clusterDir}`,
      '--auth=scram-sha-256',
      `--username=${SUPERUSER}`,
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      // Unicode-aware and independent of the locales installed on the machine.
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ];
    const output: string[] = [];
    const outcome = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
      const child = spawn(binaries.initdb, args, { ...spawnOptions(placement), stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.once('error', (error) => resolve({ code: null, error }));
      child.once('close', (code) => resolve({ code }));
    });
    if (outcome.error) throw cannotRun(binaries.initdb, outcome.error, placement);
    if (outcome.code !== 0) {
      throw new StartupError(
        `initdb failed in ${clusterDir} (${lastError(output.join('').split('\n'))}): fix that cause (free disk space, permissions), remove ${clusterDir} and start again, or set DATABASE_URL`,
      );
    }
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

async function launch(placement: Placement, options: EmbeddedPostgresOptions): Promise<{ stop(): Promise<void> }> {
  const { binaries, clusterDir } = placement;
  const args = [
    '-D',
    clusterDir,
    '-p',
    String(options.port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    ...(options.flags ?? []),
  ];
  // Its own process group: Ctrl-C in a terminal reaches only the service, which drains its requests
  // first and then stops PostgreSQL itself.
  const child = spawn(binaries.postgres, args, {
    ...spawnOptions(placement),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    windowsHide: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stderrClosed = new Promise<void>((resolve) => child.stderr.once('close', () => resolve()));
  // A service that exits without stop() (process.exit on a failure) still takes PostgreSQL along.
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };
  process.on('exit', onExit);
  void exited.then(() => process.off('exit', onExit));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    child.kill('SIGINT');
    const force = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(force);
  };

  // Postgres logs to stderr for its whole life; the pipe is read to the end so it never blocks.
  const recent: string[] = [];
  let partial = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new StartupError(
          `embedded PostgreSQL did not become ready within ${START_TIMEOUT_MS / 1000} s (${lastError(recent)}): see that cause, or set DATABASE_URL`,
        ),
      );
    }, START_TIMEOUT_MS);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        recent.push(line);
        if (recent.length > 40) recent.shift();
        if (line.includes(READY)) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(cannotRun(binaries.postgres, error, placement));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      // The last stderr lines say why; explained once they are in (no-op when it was ready).
      void stderrClosed.then(() => reject(explainFailure([...recent, partial], placement, options)));
    });
  });
  return { stop };
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, password: PASSWORD, database: 'postgres' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const lookup = sql`SELECT 1 FROM pg_database WHERE datname = ${database}`;
    const exists = await client.query(lookup.text, lookup.values);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

/** One line for a PostgreSQL that exited before it was ready. */
function explainFailure(
  lines: string[],
  placement: Pick<Placement, 'clusterDir'>,
  options: Pick<EmbeddedPostgresOptions, 'port' | 'portVariable'>,
): StartupError {
  const text = lines.join('\n');
  if (/could not bind .*Address already in use/.test(text)) {
    return new StartupError(
      `port ${options.port} on 127.0.0.1 is already in use, so embedded PostgreSQL cannot listen on it: stop the program using it, or set ${options.portVariable ?? 'EMBEDDED_PG_PORT'} to a free port (or DATABASE_URL to use another server)`,
    );
  }
  const lock = /lock file "postmaster\.pid" already exists[\s\S]*?PID (\d+)/.exec(text);
  if (lock) {
    return new StartupError(
      `another PostgreSQL (pid ${lock[1]}) is already running on ${placement.clusterDir} — is the service already running? Stop it (kill ${lock[1]}) and start again`,
    );
  }
  return new StartupError(
    `embedded PostgreSQL in ${placement.clusterDir} did not start (${lastError(lines)}): fix that cause, or set DATABASE_URL to use another server`,
  );
}

/** The most telling line of a PostgreSQL log: the last FATAL/ERROR, else the last line. */
function lastError(lines: string[]): string {
  const meaningful = lines.map((line) => line.trim()).filter(Boolean);
  const fatal = [...meaningful].reverse().find((line) => /\b(FATAL|PANIC|ERROR|error):/.test(line));
  const line = fatal ?? meaningful.at(-1) ?? 'no output';
  return line.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\]\s*/, '');
}

function cannotRun(binary: string, error: Error, placement: Placement): StartupError {
  const who = placement.user ? `user ${placement.user.name}` : 'this user';
  return new StartupError(
    `cannot run ${binary} as ${who} (${errnoCode(error) ?? error.message}): node_modules must be on a file system that allows execution; reinstall it (npm install), or set DATABASE_URL`,
  );
}
