import { Module } from '@nestjs/common';
import { CsvUploadInterceptor } from './csv-upload.interceptor.js';
import { LocationTrackersController } from './location-trackers.controller.js';
import { TrackerImportService } from './tracker-import.service.js';
import { TrackersController } from './trackers.controller.js';
import { TrackersRepository } from './trackers.repository.js';
import { TrackersService } from './trackers.service.js';

@Module({
  controllers: [TrackersController, LocationTrackersController],
  providers: [TrackersRepository, TrackersService, TrackerImportService, CsvUploadInterceptor],
  exports: [TrackersRepository, TrackersService],
})
export class TrackersModule {}
