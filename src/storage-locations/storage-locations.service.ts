import { Injectable } from '@nestjs/common';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { PlacesService } from '../places/places.service.js';
import { StorageLocationsRepository } from './storage-locations.repository.js';

/** Names the kind in summaries and error details. */
export const STORAGE_LOCATION = 'Storage location';

/** Storage locations: shared reference data, admin writes. */
@Injectable()
export class StorageLocationsService extends PlacesService {
  constructor(db: Db, repository: StorageLocationsRepository, invalidation: CacheInvalidation) {
    super(STORAGE_LOCATION, db, repository, invalidation);
  }
}
