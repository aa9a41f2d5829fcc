import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PlacesRepository } from './places/places.repository.js';

/** SQL for storage_locations, and what must be gone before one can be deleted. */
@Injectable()
export class StorageLocationsRepository extends PlacesRepository {
  constructor(db: DataSource) {
    super(db, 'storage_locations', [
      { what: 'trackers', table: 'trackers', column: 'storage_location_id' },
      { what: 'tracker status history', table: 'tracker_status_history', column: 'storage_location_id' },
    ]);
  }
}
