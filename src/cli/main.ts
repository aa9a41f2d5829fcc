import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { loadConfigOrExit, prepareRuntime } from '../runtime.js';
import { parseArgs } from './command.js';
import { COMMANDS } from './commands/index.js';

/** `npm run cli -- <command> [options]`: runs one command inside the application context. */
async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`Usage: npm run cli -- <command>\n\nCommands:\n${COMMANDS.map((c) => `  ${c.usage}`).join('\n')}`);
    process.exit(name ? 1 : 0);
  }
  const { config, embedded } = await prepareRuntime({ ...loadConfigOrExit(), logLevel: 'warn' }, () => undefined);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['error', 'warn'] });
  let code = 0;
  try {
    await command.run(app, parseArgs(rest));
  } catch (error) {
    console.error(`${command.name} failed: ${error instanceof Error ? error.message : String(error)}`);
    code = 1;
  } finally {
    await app.close();
    await embedded?.stop();
  }
  process.exit(code);
}

main().catch((error: unknown) => {
  // A start that cannot work (embedded PostgreSQL's port taken, say): its one line, no stack.
  console.error(`Failed to start: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  process.exit(1);
});
