import { Module } from '@nestjs/common';
import { GeofenceMetrics } from './geofence-metrics.js';
import { GeofencePendingRepository } from './geofence-pending.repository.js';
import { GeofenceProcessor } from './geofence-processor.service.js';
import { GeofenceWorker } from './geofence-worker.service.js';
import { GeofenceRepository } from './geofence.repository.js';
import { GeofenceResumeRepository } from './geofence-resume.repository.js';
import { VisitsController } from './visits.controller.js';
import { VisitsRepository } from './visits.repository.js';
import { VisitsService } from './visits.service.js';

/** Locations as geofences: the replay queue and worker, visits and their routes. */
@Module({
  controllers: [VisitsController],
  providers: [GeofenceMetrics, GeofenceRepository, GeofenceResumeRepository, GeofencePendingRepository, GeofenceProcessor, GeofenceWorker, VisitsRepository, VisitsService],
  exports: [GeofenceProcessor, GeofencePendingRepository, GeofenceWorker],
})
export class GeofencesModule {}
