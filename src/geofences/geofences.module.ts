import { Module } from '@nestjs/common';
import { GeofenceInbox } from './geofence-inbox.js';
import { GeofenceInputsRepository } from './geofence-inputs.repository.js';
import { GeofenceMetrics } from './geofence-metrics.js';
import { GeofencePendingRepository } from './geofence-pending.repository.js';
import { GeofenceQueue } from './geofence-queue.port.js';
import { GeofenceProcessor } from './geofence-processor.service.js';
import { GeofenceWorker } from './geofence-worker.service.js';
import { GeofenceWritesRepository } from './geofence-writes.repository.js';
import { GeofencesHealth } from './geofences.health.js';
import { VisitsController } from './visits.controller.js';
import { VisitsRepository } from './visits.repository.js';
import { VisitsService } from './visits.service.js';

/** Locations as geofences: the replay queue and worker, visits and their routes. */
@Module({
  controllers: [VisitsController],
  providers: [
    GeofencesHealth,
    GeofenceInbox,
    GeofenceQueue,
    GeofenceMetrics,
    GeofenceInputsRepository,
    GeofenceWritesRepository,
    GeofencePendingRepository,
    GeofenceProcessor,
    GeofenceWorker,
    VisitsRepository,
    VisitsService,
  ],
  exports: [GeofenceQueue, GeofenceProcessor, GeofencePendingRepository, GeofenceWorker],
})
export class GeofencesModule {}
