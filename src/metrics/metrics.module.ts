import { Global, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DatabaseModule } from '../infrastructure/database/database.module.js';
import { MetricsAccessGuard } from './metrics-access.guard.js';
import { HttpMetricsMiddleware } from './http-metrics.middleware.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

/** `GET /metrics` and the HTTP latency middleware. Global so any module can report (e.g. ingest counters). */
@Global()
@Module({
  imports: [DatabaseModule, AuthModule],
  controllers: [MetricsController],
  providers: [MetricsService, HttpMetricsMiddleware, MetricsAccessGuard],
  exports: [MetricsService],
})
export class MetricsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
