import { AccessScope } from '../../common/auth/access-scope.js';
import { LocationRebuildService } from '../../locations/location-rebuild.service.js';
import { runTrackerJob, type CliCommand } from '../command.js';

export const locationsRebuildCommand: CliCommand = {
  name: 'locations:rebuild',
  usage: 'locations:rebuild [--tracker ID]   recompute hourly/daily location history from raw reports',
  run: (app, args) =>
    runTrackerJob(args, { bar: 'Rebuilding', done: 'Rebuilt location history' }, (trackerId, progress) =>
      app.get(LocationRebuildService).rebuild(AccessScope.admin(), { trackerId, progress }),
    ),
};
