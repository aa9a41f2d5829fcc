import { placesController } from '../places/places.controller.js';
import {
  CreateStorageLocationDto,
  ListStorageLocationsQuery,
  StorageLocationResponse,
  UpdateStorageLocationDto,
} from './dto/storage-location.dto.js';
import { STORAGE_LOCATION, StorageLocationsService } from './storage-locations.service.js';

/** CRUD of storage locations under /storage-locations. */
export class StorageLocationsController extends placesController({
  path: 'storage-locations',
  resource: STORAGE_LOCATION,
  service: StorageLocationsService,
  dto: {
    create: CreateStorageLocationDto,
    update: UpdateStorageLocationDto,
    list: ListStorageLocationsQuery,
    response: StorageLocationResponse,
  },
}) {}
