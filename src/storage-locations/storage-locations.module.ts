import { Module } from '@nestjs/common';
import { StorageLocationsController } from './storage-locations.controller.js';
import { StorageLocationsRepository } from './storage-locations.repository.js';
import { StorageLocationsService } from './storage-locations.service.js';

@Module({
  controllers: [StorageLocationsController],
  providers: [StorageLocationsRepository, StorageLocationsService],
  exports: [StorageLocationsRepository],
})
export class StorageLocationsModule {}
