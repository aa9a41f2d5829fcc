import { Module } from '@nestjs/common';
import { ArrivalEstimatesModule } from '../arrival-estimates/arrival-estimates.module.js';
import { TracksModule } from '../tracks/tracks.module.js';
import { PublicRequestThrottle } from './public-request-throttle.js';
import { PublicTrackController } from './public-track.controller.js';
import { PublicTrackRepository } from './public-track.repository.js';
import { PublicTrackService } from './public-track.service.js';
import { ShareLinksController } from './share-links.controller.js';
import { ShareLinksRepository } from './share-links.repository.js';
import { ShareLinksService } from './share-links.service.js';
import { TrackAssetsController } from './track-assets.controller.js';

/** Share links: their management, the public JSON view and the public tracking page with its assets. */
@Module({
  imports: [ArrivalEstimatesModule, TracksModule],
  controllers: [ShareLinksController, PublicTrackController, TrackAssetsController],
  providers: [
    ShareLinksRepository,
    ShareLinksService,
    PublicTrackRepository,
    PublicTrackService,
    PublicRequestThrottle,
  ],
})
export class ShareLinksModule {}
