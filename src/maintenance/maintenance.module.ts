import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { MaintenanceRepository } from './maintenance.repository.js';
import { MaintenanceService } from './maintenance.service.js';
import { ReportPartitionsRepository } from './report-partitions.repository.js';

/** Periodic jobs that run on one instance at a time (raw-report partitions and retention, revocation purge). */
@Module({
  imports: [AuthModule],
  providers: [MaintenanceService, MaintenanceRepository, ReportPartitionsRepository],
  exports: [MaintenanceService],
})
export class MaintenanceModule {}
