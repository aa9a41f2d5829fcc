import cliProgress from 'cli-progress';
import { AccessScope } from '../../common/auth/access-scope.js';
import { LocationRebuildService } from '../../locations/location-rebuild.service.js';
import type { CliCommand } from '../command.js';

export const locationsRebuildCommand: CliCommand = {
  name: 'locations:rebuild',
  usage: 'locations:rebuild [--tracker ID]   recompute hourly/daily location history from raw reports',
  async run(app, args) {
    let trackerId: number | undefined;
    if (args.tracker !== undefined) {
      if (typeof args.tracker !== 'string' || !/^\d{1,10}$/.test(args.tracker) || Number(args.tracker) < 1) {
        throw new Error('--tracker must be a positive integer');
      }
      trackerId = Number(args.tracker);
    }
    const bar = new cliProgress.SingleBar({ format: 'Rebuilding |{bar}| {value}/{total} trackers | {duration_formatted}' }, cliProgress.Presets.shades_classic);
    const started = Date.now();
    const rebuilt = await app.get(LocationRebuildService).rebuild(AccessScope.admin(), {
      trackerId,
      progress: { start: (total) => bar.start(total, 0), advance: (done) => bar.update(done) },
    });
    bar.stop();
    if (trackerId !== undefined && rebuilt === 0) throw new Error(`tracker ${trackerId} not found`);
    console.log(`Rebuilt location history of ${rebuilt} tracker(s) in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  },
};
