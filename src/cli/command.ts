import type { INestApplicationContext } from '@nestjs/common';
import cliProgress from 'cli-progress';
import { parseIdText } from '../common/http/id-field.js';

/** A CLI command: `npm run cli -- <name> [--flag value] [--switch]`. */
export interface CliCommand {
  name: string;
  usage: string;
  run(app: INestApplicationContext, args: CliArgs): Promise<void>;
}

type CliArgs = Record<string, string | boolean>;

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

/** An optional id option (`--tracker 12`): plain digits within int4, like every id of the API. */
function optionalId(args: CliArgs, name: string): number | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  const id = parseIdText(value);
  if (id === null) throw new Error(`--${name} must be a positive integer`);
  return id;
}

/** Reports a per-tracker job's progress: the job announces its total, then how many are done. */
export interface TrackerProgress {
  start(total: number): void;
  advance(done: number): void;
}

/**
 * Runs a job over trackers (all, or the one of `--tracker`) with a progress bar on the terminal and
 * prints how many it handled; a missing `--tracker` is an error.
 */
export async function runTrackerJob(
  args: CliArgs,
  text: { bar: string; done: string },
  job: (trackerId: number | undefined, progress: TrackerProgress) => Promise<number>,
): Promise<void> {
  const trackerId = optionalId(args, 'tracker');
  const bar = new cliProgress.SingleBar(
    { format: `${text.bar} |{bar}| {value}/{total} trackers | {duration_formatted}` },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  const count = await job(trackerId, { start: (total) => bar.start(total, 0), advance: (done) => bar.update(done) });
  bar.stop();
  if (trackerId !== undefined && count === 0) throw new Error(`tracker ${trackerId} not found`);
  console.log(`${text.done} of ${count} tracker(s) in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}
