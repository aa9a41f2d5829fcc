import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunnerMessage, ServerMessage } from './server-process.js';
import { processCpuMs } from '../standalone.js';

export const BENCH_JWT_SECRET = 'bench-jwt-secret-0123456789abcdef-0123456789abcdef';

export interface ServerHandle {
  base: string;
  token: string | null;
  startupMs: number;
  readyRss: number;
  /** Current RSS of the server process (bytes). */
  rss(): Promise<number>;
  /** RSS and V8 heap in use of the server process (bytes). */
  memory(): Promise<{ rss: number; heapUsed: number }>;
  /** Samples RSS every `everyMs` while `work` runs; answers the work's result and the peak. */
  sampleRss<T>(work: () => Promise<T>, everyMs?: number): Promise<{ result: T; peakRss: number }>;
  /** CPU time (user + system) the server process has used so far, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** Starts a measured server (server-process.ts) as a child process and waits for it to be ready. */
export async function startServer(
  mode: 'app' | 'ceiling',
  port: number,
  env: Record<string, string | undefined> = {},
  execArgv: string[] = [],
): Promise<ServerHandle> {
  const entry = fileURLToPath(new URL('./server-process.js', import.meta.url));
  // stdout (request logs at LOG_LEVEL=info) goes to /dev/null: the cost of logging stays measured.
  const child: ChildProcess = fork(entry, [mode], {
    env: { ...process.env, ...env, BENCH_SERVER_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv,
  });
  // Requests waiting for a message type; an exit or error of the child fails all of them.
  const pending: { type: ServerMessage['type']; resolve: (m: ServerMessage) => void; reject: (e: Error) => void }[] =
    [];
  const failAll = (error: Error) => pending.splice(0).forEach((p) => p.reject(error));
  child.on('message', (message: ServerMessage) => {
    if (message.type === 'error') return failAll(new Error(`server (${mode}) failed: ${message.message}`));
    const index = pending.findIndex((p) => p.type === message.type);
    if (index >= 0) pending.splice(index, 1)[0].resolve(message);
  });
  child.on('exit', (code) => failAll(new Error(`server (${mode}) exited with ${code}`)));
  const next = <K extends ServerMessage['type']>(type: K, timeoutMs = 120_000) =>
    new Promise<Extract<ServerMessage, { type: K }>>((resolve, reject) => {
      const entry = {
        type,
        resolve: (m: ServerMessage) => {
          clearTimeout(timer);
          resolve(m as Extract<ServerMessage, { type: K }>);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        pending.splice(pending.indexOf(entry), 1);
        reject(new Error(`server (${mode}) did not answer '${type}' in ${timeoutMs} ms`));
      }, timeoutMs);
      pending.push(entry);
    });
  const ready = await next('ready');
  const ask = (message: RunnerMessage) => child.send(message);
  const memory = async () => {
    const answer = next('rss', 5000);
    ask({ type: 'rss' });
    const { rss, heapUsed } = await answer;
    return { rss, heapUsed };
  };
  const rss = async () => (await memory()).rss;
  return {
    base: `http://127.0.0.1:${port}`,
    token: ready.token,
    startupMs: ready.startupMs,
    readyRss: ready.rss,
    rss,
    memory,
    async sampleRss(work, everyMs = 100) {
      let peakRss = await rss();
      let running = true;
      const sampler = (async () => {
        while (running) {
          peakRss = Math.max(peakRss, await rss().catch(() => 0));
          await new Promise((r) => setTimeout(r, everyMs));
        }
      })();
      let result;
      try {
        result = await work();
      } finally {
        running = false;
        await sampler;
      }
      peakRss = Math.max(peakRss, await rss().catch(() => 0));
      return { result, peakRss };
    },
    cpuMs: () => processCpuMs(child.pid!),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      ask({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
