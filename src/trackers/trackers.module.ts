import { ArrivalEstimatesModule } from '../arrival-estimates/arrival-estimates.module.js';
import { Module } from '@nestjs/common';
import { GeofencesModule } from '../geofences/geofences.module.js';
import { LocationsModule } from '../locations/locations.module.js';
import { CsvUploadInterceptor } from './csv-upload.interceptor.js';
import { LocationTrackersController } from './location-trackers.controller.js';
import { TrackerBulkRepository } from './tracker-bulk.repository.js';
import { TrackerBulkService } from './tracker-bulk.service.js';
import { TrackerImportService } from './tracker-import.service.js';
import { TrackerListsService } from './tracker-lists.service.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import { TrackerStatusEntriesService } from './tracker-status-entries.service.js';
import { TrackerStatusRepository } from './tracker-status.repository.js';
import { TrackersController } from './trackers.controller.js';
import { TrackersRepository } from './trackers.repository.js';
import { TrackersService } from './trackers.service.js';
import { TrackersHealth } from './trackers.health.js';

@Module({
  imports: [LocationsModule, GeofencesModule, ArrivalEstimatesModule],
  controllers: [TrackersController, LocationTrackersController],
  providers: [
    TrackersHealth,
    TrackersRepository,
    TrackerStatusRepository,
    TrackerReferencesRepository,
    TrackerBulkRepository,
    TrackersService,
    TrackerListsService,
    TrackerStatusEntriesService,
    TrackerBulkService,
    TrackerImportService,
    CsvUploadInterceptor,
  ],
  exports: [TrackerBulkService],
})
export class TrackersModule {}
