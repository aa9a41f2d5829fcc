import type { CliCommand } from '../command.js';
import { dbTypesCommand } from './db-types.command.js';
import { geofencesRebuildCommand } from './geofences-rebuild.command.js';
import { mailOffCommand } from './mail-off.command.js';
import { locationsRebuildCommand } from './locations-rebuild.command.js';
import { seedDemoCommand } from './seed-demo.command.js';
import { userCreateCommand } from './user-create.command.js';

/** Every CLI command; add new ones here. */
export const COMMANDS: CliCommand[] = [
  seedDemoCommand,
  userCreateCommand,
  locationsRebuildCommand,
  geofencesRebuildCommand,
  mailOffCommand,
  dbTypesCommand,
];
