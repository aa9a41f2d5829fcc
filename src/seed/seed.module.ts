import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { LocationsModule } from '../locations/locations.module.js';
import { TrackersModule } from '../trackers/trackers.module.js';
import { UsersModule } from '../users/users.module.js';
import { DemoDataService } from './demo-data.service.js';
import { FirstStartService } from './first-start.service.js';

@Module({
  imports: [AuthModule, UsersModule, TrackersModule, LocationsModule],
  providers: [DemoDataService, FirstStartService],
  exports: [DemoDataService, FirstStartService],
})
export class SeedModule {}
