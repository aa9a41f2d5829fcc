import type { INestApplicationContext } from '@nestjs/common';

/** A CLI command: `npm run cli -- <name> [--flag value] [--switch]`. */
export interface CliCommand {
  name: string;
  usage: string;
  run(app: INestApplicationContext, args: CliArgs): Promise<void>;
}

export type CliArgs = Record<string, string | boolean>;

export function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) continue;
    const [key, inline] = arg.slice(2).split('=', 2);
    if (inline !== undefined) args[key] = inline;
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) args[key] = argv[++i];
    else args[key] = true;
  }
  return args;
}

export function requireString(args: CliArgs, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required`);
  return value;
}
