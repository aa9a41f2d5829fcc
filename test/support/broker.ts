import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, refused } from './service-process.js';

/**
 * A Mosquitto broker of a test's own on a free port (anonymous, in memory), which the test may stop
 * and start again on the same port. `settings` are extra lines of its configuration.
 */
export class TestBroker {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'tps-mosquitto-'));

  private constructor(
    readonly port: number,
    private readonly settings: string[],
  ) {}

  static async start(settings: string[] = []): Promise<TestBroker> {
    const broker = new TestBroker(await freePort(), settings);
    await broker.start();
    return broker;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const config = join(this.dir, 'mosquitto.conf');
    writeFileSync(
      config,
      [
        `listener ${this.port} 127.0.0.1`,
        'allow_anonymous true',
        'persistence false',
        'user root',
        ...this.settings,
      ].join('\n') + '\n',
    );
    this.child = spawn('mosquitto', ['-c', config], { stdio: 'ignore' });
    const deadline = Date.now() + 5000;
    while (await refused(this.port)) {
      if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${this.port}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
