import { Module } from '@nestjs/common';
import { DeliveryLocationsController } from './delivery-locations.controller.js';
import { DeliveryLocationsRepository, StorageLocationsRepository } from './places.repository.js';
import { DeliveryLocationsService, StorageLocationsService } from './places.service.js';
import { StorageLocationsController } from './storage-locations.controller.js';

/**
 * Storage and delivery locations: the same fields and rules over two tables, so one repository
 * and one service class, each instantiated per table, and a controller per route prefix.
 */
@Module({
  controllers: [StorageLocationsController, DeliveryLocationsController],
  providers: [
    StorageLocationsRepository,
    StorageLocationsService,
    DeliveryLocationsRepository,
    DeliveryLocationsService,
  ],
})
export class PlacesModule {}
