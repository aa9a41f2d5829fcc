import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module.js';
import { GeofencesModule } from '../geofences/geofences.module.js';
import { LocationAggregatesHealth } from './location-aggregates.health.js';
import { LocationHistoryHealth } from './location-history.health.js';
import { LocationHistoryService } from './location-history.service.js';
import { LocationIngestionService } from './location-ingestion.service.js';
import { LocationRebuildService } from './location-rebuild.service.js';
import { LocationsController } from './locations.controller.js';
import { LocationsDemoSeeder } from './locations-demo.service.js';
import { LocationsRepository } from './locations.repository.js';

/**
 * Location pipeline: report ingestion with in-transaction hourly/daily aggregation,
 * location history, latest locations, rebuild from raw, and demo reports.
 */
@Module({
  imports: [GeofencesModule, AlertsModule],
  controllers: [LocationsController],
  providers: [
    LocationsRepository,
    LocationIngestionService,
    LocationHistoryService,
    LocationRebuildService,
    LocationsDemoSeeder,
    LocationHistoryHealth,
    LocationAggregatesHealth,
  ],
  exports: [LocationIngestionService, LocationHistoryService, LocationRebuildService, LocationsDemoSeeder],
})
export class LocationsModule {}
