import { placesController } from './place-routes.js';
import {
  CreateStorageLocationDto,
  ListStorageLocationsQuery,
  StorageLocationResponse,
  UpdateStorageLocationDto,
} from './dto/storage-location.dto.js';
import { StorageLocationsService } from './places.service.js';

/** CRUD of storage locations under /storage-locations. */
export class StorageLocationsController extends placesController({
  path: 'storage-locations',
  resource: 'Storage location',
  service: StorageLocationsService,
  dto: {
    create: CreateStorageLocationDto,
    update: UpdateStorageLocationDto,
    list: ListStorageLocationsQuery,
    response: StorageLocationResponse,
  },
}) {}
