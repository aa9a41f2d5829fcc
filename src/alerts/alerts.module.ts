import { Module } from '@nestjs/common';
import { AlertCheckRepository } from './alert-check.repository.js';
import { AlertCheckService } from './alert-check.service.js';
import { AlertMetrics } from './alert-metrics.js';
import { AlertsController } from './alerts.controller.js';
import { AlertsRepository } from './alerts.repository.js';
import { AlertsService } from './alerts.service.js';
import { ReportActivityUpkeep } from './report-activity.port.js';

/**
 * Alerts: silent, overdue and low-battery trackers. The periodic check opens and resolves them;
 * report writers keep the per-tracker activity the check reads and resolve what their reports end
 * (ReportActivityUpkeep); a tracker leaving transit or storage resolves its alerts in the
 * database (alert-events.db-rules.ts). Their events take the status changes' path.
 */
@Module({
  controllers: [AlertsController],
  providers: [
    AlertsRepository,
    AlertsService,
    AlertCheckRepository,
    AlertCheckService,
    AlertMetrics,
    ReportActivityUpkeep,
  ],
  exports: [ReportActivityUpkeep, AlertCheckService],
})
export class AlertsModule {}
