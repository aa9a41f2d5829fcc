import { Module } from '@nestjs/common';
import { GeofencesModule } from '../geofences/geofences.module.js';
import { LocationsModule } from '../locations/locations.module.js';
import { CsvUploadInterceptor } from './csv-upload.interceptor.js';
import { LocationTrackersController } from './location-trackers.controller.js';
import { TrackerBulkRepository } from './tracker-bulk.repository.js';
import { TrackerImportService } from './tracker-import.service.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import { TrackerStatusRepository } from './tracker-status.repository.js';
import { TrackersController } from './trackers.controller.js';
import { TrackersRepository } from './trackers.repository.js';
import { TrackersService } from './trackers.service.js';

@Module({
  imports: [LocationsModule, GeofencesModule],
  controllers: [TrackersController, LocationTrackersController],
  providers: [
    TrackersRepository,
    TrackerStatusRepository,
    TrackerReferencesRepository,
    TrackerBulkRepository,
    TrackersService,
    TrackerImportService,
    CsvUploadInterceptor,
  ],
  exports: [TrackersRepository, TrackerBulkRepository, TrackersService],
})
export class TrackersModule {}
