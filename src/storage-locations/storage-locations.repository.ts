import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PlacesRepository } from './places/places.repository.js';

/** SQL for storage_locations (referenced by trackers and status entries through storage_location_id). */
@Injectable()
export class StorageLocationsRepository extends PlacesRepository {
  constructor(db: DataSource) {
    super(db, 'storage_locations', 'storage_location_id');
  }
}
