import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { ExpressHttpAdapter } from './infrastructure/http/express-http-adapter.js';
import { FirstStartService } from './seed/first-start.service.js';
import type { EmbeddedDatabase } from './infrastructure/database/embedded-postgres.js';
import { loadConfigOrExit, prepareRuntime } from './runtime.js';
import { errnoCode, StartupError } from './common/errors/startup-error.js';

const SHUTDOWN_GRACE_MS = 10_000;

let embedded: EmbeddedDatabase | null = null;
let shuttingDown = false;

/** A signal before the service is up: stop what was started and leave. */
function abortStart(signal: string): void {
  if (shuttingDown) return;
  shuttingDown = true;
  console.log(`${signal} received while starting: stopping`);
  void (embedded?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
}

async function main(): Promise<void> {
  const started = Date.now();
  process.on('SIGTERM', abortStart);
  process.on('SIGINT', abortStart);
  const runtime = await prepareRuntime(loadConfigOrExit(), (m) => console.log(m));
  const { config } = runtime;
  embedded = runtime.embedded;
  if (shuttingDown) return;
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new ExpressHttpAdapter(), {
    bufferLogs: true,
  });
  configureApp(app, config);

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.log(`${signal} received: draining requests (up to ${SHUTDOWN_GRACE_MS / 1000} s)`);
    setTimeout(() => {
      console.error('Shutdown grace period over, exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    // Stop accepting connections first: Nest closes the listener only after every module's
    // shutdown hook, and the background workers finish their current pass there. Idle keep-alive
    // connections would hold the close open until they time out: drop each one as soon as it has
    // answered its last request.
    const server = app.getHttpServer() as Server;
    server.close();
    setInterval(() => server.closeIdleConnections(), 100).unref();
    try {
      await app.close();
      await embedded?.stop();
      process.exit(0);
    } catch (error) {
      console.error('Shutdown failed', error);
      process.exit(1);
    }
  };
  // From here on a signal drains requests first and then stops the embedded database: this
  // handler must be the only one. It stays installed, so that a second signal (Ctrl-C reaches both
  // npm, which forwards it, and the service) cannot kill the process midway through the drain.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const firstStart = await app.get(FirstStartService).run();
  try {
    await app.listen(config.port, '0.0.0.0');
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'EADDRINUSE')
      throw new StartupError(
        `port ${config.port} is already in use: stop the program using it, or set PORT to a free port`,
      );
    if (code === 'EACCES')
      throw new StartupError(`port ${config.port} needs privileges this user lacks: set PORT to 1024 or above`);
    throw error;
  }
  const base = `http://localhost:${config.port}`;
  const lines = [
    `Tracker Pipeline Service ready in ${Date.now() - started} ms`,
    `  API docs:  ${base}/docs`,
    `  OpenAPI:   ${base}/openapi.json`,
  ];
  if (firstStart.adminCreated) {
    lines.push(`  Admin:     ${firstStart.adminEmail}`);
    lines.push(
      firstStart.generatedPassword
        ? `  Password:  ${firstStart.generatedPassword}   (generated; shown only this once)`
        : '  Password:  from ADMIN_PASSWORD',
    );
    if (firstStart.demoData) lines.push('  Demo data: created (SEED_DEMO_DATA=false to skip)');
  }
  console.log(lines.join('\n'));
}

main().catch(async (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  // One line: the cause and (for a StartupError) the fix; never a stack.
  console.error(`Failed to start: ${error instanceof StartupError ? message : message.split('\n')[0]}`);
  await embedded?.stop().catch(() => undefined);
  process.exit(1);
});
