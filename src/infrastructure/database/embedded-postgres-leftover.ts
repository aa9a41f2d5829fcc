import { readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StartupError } from '../../common/errors/startup-error.js';

const FAST_SHUTDOWN_MS = 10_000;
const IMMEDIATE_SHUTDOWN_MS = 5_000;

/**
 * A PostgreSQL left running on this cluster by an earlier run of the service that never stopped it
 * (killed with SIGKILL, crashed, OOM-killed): its `postmaster.pid` names a live process. When that
 * process is a `postgres` working in this very directory, the cluster is ours and so is the
 * process: it gets a fast shutdown (SIGINT, then SIGQUIT) and this start launches its own, with
 * the current port and settings. A lock naming a live process that is not a postgres on this
 * directory (its pid reused after a reboot) is stale and removed. A dead pid is left to PostgreSQL,
 * which clears such a lock itself. Without /proc nothing is judged and PostgreSQL's own refusal
 * (naming the pid) stands. Returns what was done, for the start log, or null.
 */
export async function clearLeftoverPostgres(clusterDir: string): Promise<string | null> {
  const lockFile = join(clusterDir, 'postmaster.pid');
  let lock: string;
  try {
    lock = readFileSync(lockFile, 'utf8');
  } catch {
    return null;
  }
  const pid = Number(lock.split('\n')[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !alive(pid)) return null;
  const process_ = describeProcess(pid);
  if (!process_) return null;
  if (!process_.postgres || !samePath(process_.cwd, clusterDir)) {
    rmSync(lockFile, { force: true });
    return `removed a stale postmaster.pid (pid ${pid} is not a PostgreSQL on this cluster)`;
  }
  if (
    !(await signalAndWait(pid, 'SIGINT', FAST_SHUTDOWN_MS)) &&
    !(await signalAndWait(pid, 'SIGQUIT', IMMEDIATE_SHUTDOWN_MS))
  ) {
    throw new StartupError(
      `PostgreSQL (pid ${pid}) left running on ${clusterDir} by an earlier run did not stop: stop it (kill ${pid}) and start again`,
    );
  }
  return `stopped the PostgreSQL (pid ${pid}) an earlier run left running on this cluster`;
}

/** Signals the process and waits for it to be gone; false when it outlives `timeoutMs`. */
async function signalAndWait(pid: number, signal: NodeJS.Signals, timeoutMs: number): Promise<boolean> {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw new StartupError(
      `another PostgreSQL (pid ${pid}) is running on a cluster of this service and cannot be stopped from here (${(error as NodeJS.ErrnoException).code ?? 'error'}): stop it (kill ${pid}) and start again`,
    );
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  return !alive(pid);
}

/** Running, and not a zombie waiting for a parent to reap it (an orphan's new parent may never do so). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // `pid (comm) S …`: the state follows the last parenthesis (comm may contain spaces or parentheses).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * Whether a process runs the `postgres` program (its binary, else its command line, which the
 * postmaster may have rewritten as `postgres: …`) and its working directory (PostgreSQL works in
 * its data directory), from /proc; null without /proc.
 */
function describeProcess(pid: number): { postgres: boolean; cwd: string | undefined } | null {
  let argv0: string;
  try {
    argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return null;
  }
  const read = (path: string) => {
    try {
      return readlinkSync(path);
    } catch {
      return undefined;
    }
  };
  const exe = read(`/proc/${pid}/exe`)?.replace(/ \(deleted\)$/, '');
  const postgres = exe ? basename(exe) === 'postgres' : /^postgres(:|$)/.test(basename(argv0.split(' ')[0]));
  return { postgres, cwd: read(`/proc/${pid}/cwd`) };
}

function samePath(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
