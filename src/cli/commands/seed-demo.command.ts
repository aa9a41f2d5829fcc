import { DemoDataService } from '../../seed/demo-data.service.js';
import type { CliCommand } from '../command.js';

export const seedDemoCommand: CliCommand = {
  name: 'seed:demo',
  usage: 'seed:demo [--trackers-per-run N]   add a demo data set',
  async run(app, args) {
    const perRun = typeof args['trackers-per-run'] === 'string' ? Number(args['trackers-per-run']) : 40;
    await app.get(DemoDataService).seed(perRun);
    console.log('Demo data added.');
  },
};
