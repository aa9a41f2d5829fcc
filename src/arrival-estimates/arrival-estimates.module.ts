import { Module } from '@nestjs/common';
import { ArrivalEstimatesRepository } from './arrival-estimates.repository.js';
import { ArrivalEstimatesService } from './arrival-estimates.service.js';

/** Arrival estimates of trackers on their way, from their client's delivered journeys. */
@Module({
  providers: [ArrivalEstimatesRepository, ArrivalEstimatesService],
  exports: [ArrivalEstimatesService],
})
export class ArrivalEstimatesModule {}
