import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DatabaseModule } from '../infrastructure/database/database.module.js';
import { MetricsAccessGuard } from './metrics-access.guard.js';
import { HttpMetricsMiddleware } from './http-metrics.middleware.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

/**
 * `GET /metrics` and the HTTP latency middleware (mounted by configureApp, ahead of the answers
 * served before routing). Global so any module can report (e.g. ingest counters).
 */
@Global()
@Module({
  imports: [DatabaseModule, AuthModule],
  controllers: [MetricsController],
  providers: [MetricsService, HttpMetricsMiddleware, MetricsAccessGuard],
  exports: [MetricsService],
})
export class MetricsModule {}
