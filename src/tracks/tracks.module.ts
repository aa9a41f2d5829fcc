import { Module } from '@nestjs/common';
import { TracksController } from './tracks.controller.js';
import { TracksRepository } from './tracks.repository.js';
import { TracksService } from './tracks.service.js';

/** Maps: a tracker's track (GeoJSON, GPX, KML) and a run's latest positions. */
@Module({
  controllers: [TracksController],
  providers: [TracksRepository, TracksService],
  exports: [TracksService],
})
export class TracksModule {}
