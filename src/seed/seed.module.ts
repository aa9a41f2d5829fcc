import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { UsersModule } from '../users/users.module.js';
import { DemoDataService } from './demo-data.service.js';
import { FirstStartService } from './first-start.service.js';

@Module({
  imports: [AuthModule, UsersModule],
  providers: [DemoDataService, FirstStartService],
  exports: [DemoDataService, FirstStartService],
})
export class SeedModule {}
