import { GeofenceProcessor } from '../../geofences/geofence-processor.service.js';
import { runTrackerJob, type CliCommand } from '../command.js';

export const geofencesRebuildCommand: CliCommand = {
  name: 'geofences:rebuild',
  usage: 'geofences:rebuild [--tracker ID]   recompute visits and automatic status entries with the current locations',
  run: (app, args) =>
    runTrackerJob(args, { bar: 'Replaying', done: 'Replayed geofences' }, (trackerId, progress) =>
      app.get(GeofenceProcessor).rebuild({ trackerId, progress }),
    ),
};
