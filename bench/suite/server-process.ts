/**
 * Entry of a measured HTTP server, started by the runner with `fork()` so the server's CPU, event
 * loop and RSS are its own (the load generator runs in the parent):
 *
 *   node dist/bench/suite/server-process.js app       — the real service: AppModule.forRoot(config) + configureApp
 *   node dist/bench/suite/server-process.js ceiling   — a minimal NestJS (Express) app with one trivial route
 *
 * Configuration comes from the environment (see server-client.ts). Talks to the runner over IPC:
 * `ready` (port, start-up time, admin token), `rss` on request, `stop`.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { ExpressHttpAdapter } from '../../src/infrastructure/http/express-http-adapter.js';
import { TokenService } from '../../src/auth/token.service.js';
import { loadConfig } from '../../src/common/config/app-config.js';

export type ServerMessage =
  | { type: 'ready'; port: number; startupMs: number; token: string | null; rss: number }
  | { type: 'rss'; rss: number; heapUsed: number }
  | { type: 'error'; message: string };
export type RunnerMessage = { type: 'rss' } | { type: 'stop' };

@Controller()
class CeilingController {
  @Get('ping')
  ping(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [CeilingController] })
class CeilingModule {}

const send = (message: ServerMessage) => process.send?.(message);

async function startApp(port: number): Promise<{ app: INestApplication; token: string }> {
  const config = loadConfig({ ...process.env, PORT: String(port), SEED_DEMO_DATA: 'false' });
  const app = await NestFactory.create(AppModule.forRoot(config), new ExpressHttpAdapter(), {
    logger: ['error', 'warn'],
  });
  configureApp(app, config);
  await app.listen(port, '127.0.0.1');
  const token = app.get(TokenService).issue(Number(process.env.BENCH_ADMIN_USER_ID), 'access').token;
  return { app, token };
}

async function startCeiling(port: number): Promise<{ app: INestApplication; token: null }> {
  const app = await NestFactory.create(CeilingModule, new ExpressHttpAdapter(), { logger: false });
  await app.listen(port, '127.0.0.1');
  return { app, token: null };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  const port = Number(process.env.BENCH_SERVER_PORT);
  const { app, token } = mode === 'ceiling' ? await startCeiling(port) : await startApp(port);
  // process.uptime() counts from process start, so module loading is part of "start-up to ready".
  send({ type: 'ready', port, startupMs: process.uptime() * 1000, token, rss: process.memoryUsage().rss });
  process.on('message', (message: RunnerMessage) => {
    if (message.type === 'rss') {
      const usage = process.memoryUsage();
      send({ type: 'rss', rss: usage.rss, heapUsed: usage.heapUsed });
    } else if (message.type === 'stop') {
      void app.close().finally(() => process.exit(0));
    }
  });
}

main().catch((error: unknown) => {
  send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
