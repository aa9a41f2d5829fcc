import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * A PostgreSQL primary and one streaming replica of their own, for the read-replica tests: the
 * shared test server cannot take replication connections, and must not be reconfigured. Built from
 * the PostgreSQL server binaries (TEST_PG_BINDIR, else `pg_config --bindir`): initdb, pg_ctl,
 * pg_basebackup. Both run in one temporary directory under /tmp on free ports, as the `postgres`
 * system user when the tests run as root (PostgreSQL refuses root), with durability off (fsync)
 * since they live for one test file. `stop()` removes everything; a test process that dies
 * without calling it still stops both servers on exit.
 */
export interface ReplicationPair {
  readonly database: string;
  readonly primaryUrl: string;
  readonly replicaUrl: string;
  /** SQL on the primary's test database (as the superuser). */
  primaryQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  /** SQL on the replica's test database. */
  replicaQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  /** Stops WAL replay on the replica (it still receives WAL) and waits until it has stopped. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had written when called. */
  waitForReplay(timeoutMs?: number): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  stop(): Promise<void>;
}

const run = promisify(execFile);

function binDir(): string {
  const dir = process.env.TEST_PG_BINDIR ?? spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout?.trim();
  if (!dir || !existsSync(join(dir, 'pg_basebackup'))) {
    throw new Error(
      'the read-replica tests need the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup): install them, or set TEST_PG_BINDIR',
    );
  }
  return dir;
}

/** The `postgres` user's ids when the tests run as root (PostgreSQL refuses to run as root). */
function databaseUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error('running as root, the read-replica tests need a `postgres` system user to run PostgreSQL as');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const SERVER_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "unix_socket_directories = ''",
  'wal_level = replica',
  'max_wal_senders = 4',
  'hot_standby = on',
  'fsync = off',
  'full_page_writes = off',
  'shared_buffers = 32MB',
  'max_connections = 60',
  "wal_keep_size = '128MB'",
  // Replay can be paused by the tests for a while; never cancel a standby query for it meanwhile.
  'max_standby_streaming_delay = -1',
];

export async function startReplicationPair(options: { database?: string } = {}): Promise<ReplicationPair> {
  const bin = binDir();
  const user = databaseUser();
  const root = mkdtempSync('/tmp/tps-replication-');
  if (user) chownSync(root, user.uid, user.gid);
  const primaryDir = join(root, 'primary');
  const replicaDir = join(root, 'replica');
  const database = options.database ?? 'tps_test_replication';
  const primaryPort = await freePort();
  // A port just released can be handed out again at once: the replica's must differ from the primary's.
  let replicaPort = await freePort();
  while (replicaPort === primaryPort) replicaPort = await freePort();
  const urlOf = (port: number) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const primaryUrl = urlOf(primaryPort);
  const replicaUrl = urlOf(replicaPort);
  const env = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C', PGUSER: 'postgres' };

  const asPostgres = async (command: string, args: string[]): Promise<void> => {
    const [file, argv] = user
      ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]]
      : [join(bin, command), args];
    try {
      await run(file, argv, { cwd: root, env, timeout: 120_000 });
    } catch (error) {
      const log = (dir: string) =>
        existsSync(`${dir}.log`) ? readFileSync(`${dir}.log`, 'utf8').split('\n').slice(-15).join('\n') : '';
      throw new Error(
        `${command} ${args.join(' ')} failed: ${(error as Error).message}\n${log(primaryDir)}\n${log(replicaDir)}`,
        { cause: error },
      );
    }
  };
  const pgCtl = (dir: string, action: 'start' | 'stop', mode = 'fast') =>
    action === 'start'
      ? asPostgres('pg_ctl', ['-D', dir, '-l', `${dir}.log`, '-w', '-t', '60', 'start'])
      : asPostgres('pg_ctl', ['-D', dir, '-m', mode, '-w', '-t', '60', 'stop']);

  // A test process that ends without stop() (a crash, a timeout) still takes both servers along.
  const stopNow = () => {
    for (const dir of [replicaDir, primaryDir]) {
      if (!existsSync(join(dir, 'postmaster.pid'))) continue;
      const [file, argv] = user
        ? ['runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', dir, '-m', 'immediate', 'stop']]
        : [join(bin, 'pg_ctl'), ['-D', dir, '-m', 'immediate', 'stop']];
      try {
        execFileSync(file, argv, { cwd: root, env, stdio: 'ignore', timeout: 30_000 });
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', stopNow);
  const cleanUp = () => {
    process.off('exit', stopNow);
    stopNow();
    rmSync(root, { recursive: true, force: true });
  };

  try {
    await asPostgres('initdb', [
      '-D',
      primaryDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ]);
    appendFileSync(join(primaryDir, 'postgresql.conf'), `\nport = ${primaryPort}\n${SERVER_SETTINGS.join('\n')}\n`);
    // initdb's pg_hba.conf already trusts replication connections from 127.0.0.1 (--auth=trust).
    await pgCtl(primaryDir, 'start');
    await withClient(`postgres://postgres@127.0.0.1:${primaryPort}/postgres`, (c) =>
      c.query(`CREATE DATABASE ${database}`),
    );
    await asPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    appendFileSync(join(replicaDir, 'postgresql.conf'), `\nport = ${replicaPort}\n`);
    await pgCtl(replicaDir, 'start');
  } catch (error) {
    cleanUp();
    throw error;
  }

  const primaryQuery = <T extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
    withClient(primaryUrl, async (c) => (await c.query<T>(text, values)).rows);
  const replicaQuery = <T extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
    withClient(replicaUrl, async (c) => (await c.query<T>(text, values)).rows);

  const pair: ReplicationPair = {
    database,
    primaryUrl,
    replicaUrl,
    primaryQuery,
    replicaQuery,
    async pauseReplay() {
      await replicaQuery('SELECT pg_wal_replay_pause()');
      const deadline = Date.now() + 10_000;
      while (
        (await replicaQuery<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state'))[0].state !== 'paused'
      ) {
        if (Date.now() > deadline) throw new Error('replay did not pause');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async resumeReplay() {
      await replicaQuery('SELECT pg_wal_replay_resume()');
    },
    async waitForReplay(timeoutMs = 15_000) {
      const [{ lsn }] = await primaryQuery<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [{ done }] = await replicaQuery<{ done: boolean }>(
          'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
          [lsn],
        );
        if (done) return;
        if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${lsn} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stopReplica: () => pgCtl(replicaDir, 'stop'),
    startReplica: () => pgCtl(replicaDir, 'start'),
    async stop() {
      cleanUp();
    },
  };
  return pair;
}
