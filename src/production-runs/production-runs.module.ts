import { Module } from '@nestjs/common';
import { ProductionRunsController } from './production-runs.controller.js';
import { ProductionRunsRepository } from './production-runs.repository.js';
import { ProductionRunsService } from './production-runs.service.js';

@Module({
  controllers: [ProductionRunsController],
  providers: [ProductionRunsRepository, ProductionRunsService],
})
export class ProductionRunsModule {}
