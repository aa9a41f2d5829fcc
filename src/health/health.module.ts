import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseModule } from '../infrastructure/database/database.module.js';
import { DbPoolAvailability } from './db-pool-availability.middleware.js';
import { DbPoolController } from './db-pool.controller.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { CacheStoreHealthIndicator } from './indicators/cache-store.health.js';
import { DatabaseHealthIndicator } from './indicators/database.health.js';
import { PipelineChecksRepository } from './pipeline/pipeline-checks.repository.js';
import { PipelineSteps } from './pipeline/pipeline-steps.js';
import { PipelineHealthService } from './pipeline/pipeline.service.js';

/** Health monitoring on @nestjs/terminus indicators. */
@Module({
  // Terminus' own logger is off: HealthService logs failures through the app's (pino) logger.
  imports: [TerminusModule.forRoot({ logger: false }), DatabaseModule, DiscoveryModule],
  controllers: [HealthController, DbPoolController],
  providers: [
    HealthService,
    DatabaseHealthIndicator,
    CacheStoreHealthIndicator,
    PipelineHealthService,
    PipelineSteps,
    PipelineChecksRepository,
  ],
})
export class HealthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DbPoolAvailability).forRoutes({ path: 'health/db-pool', method: RequestMethod.GET });
  }
}
