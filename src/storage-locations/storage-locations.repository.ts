import { Injectable } from '@nestjs/common';
import { Db } from '../infrastructure/database/db.js';
import { PlacesRepository } from '../places/places.repository.js';

/** SQL for storage_locations (referenced by trackers and status entries through storage_location_id). */
@Injectable()
export class StorageLocationsRepository extends PlacesRepository {
  constructor(db: Db) {
    super(db, 'storage_locations', 'storage_location_id');
  }
}
