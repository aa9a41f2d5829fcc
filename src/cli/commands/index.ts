import type { CliCommand } from '../command.js';
import { seedDemoCommand } from './seed-demo.command.js';

/** Every CLI command; add new ones here. */
export const COMMANDS: CliCommand[] = [seedDemoCommand];
