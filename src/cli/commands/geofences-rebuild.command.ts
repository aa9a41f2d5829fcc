import cliProgress from 'cli-progress';
import { GeofenceProcessor } from '../../geofences/geofence-processor.service.js';
import type { CliCommand } from '../command.js';

export const geofencesRebuildCommand: CliCommand = {
  name: 'geofences:rebuild',
  usage: 'geofences:rebuild [--tracker ID]   recompute visits and automatic status entries with the current locations',
  async run(app, args) {
    let trackerId: number | undefined;
    if (args.tracker !== undefined) {
      if (typeof args.tracker !== 'string' || !/^\d{1,10}$/.test(args.tracker) || Number(args.tracker) < 1) {
        throw new Error('--tracker must be a positive integer');
      }
      trackerId = Number(args.tracker);
    }
    const bar = new cliProgress.SingleBar({ format: 'Replaying |{bar}| {value}/{total} trackers | {duration_formatted}' }, cliProgress.Presets.shades_classic);
    const started = Date.now();
    const replayed = await app.get(GeofenceProcessor).rebuild({
      trackerId,
      progress: { start: (total) => bar.start(total, 0), advance: (done) => bar.update(done) },
    });
    bar.stop();
    if (trackerId !== undefined && replayed === 0) throw new Error(`tracker ${trackerId} not found`);
    console.log(`Replayed geofences of ${replayed} tracker(s) in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  },
};
