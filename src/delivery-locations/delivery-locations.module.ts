import { Module } from '@nestjs/common';
import { DeliveryLocationsController } from './delivery-locations.controller.js';
import { DeliveryLocationsRepository } from './delivery-locations.repository.js';
import { DeliveryLocationsService } from './delivery-locations.service.js';

@Module({
  controllers: [DeliveryLocationsController],
  providers: [DeliveryLocationsRepository, DeliveryLocationsService],
  exports: [DeliveryLocationsRepository],
})
export class DeliveryLocationsModule {}
