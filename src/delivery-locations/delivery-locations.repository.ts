import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PlacesRepository } from '../storage-locations/places/places.repository.js';

/** SQL for delivery_locations, and what must be gone before one can be deleted. */
@Injectable()
export class DeliveryLocationsRepository extends PlacesRepository {
  constructor(db: DataSource) {
    super(db, 'delivery_locations', [
      { what: 'trackers', table: 'trackers', column: 'delivery_location_id' },
      { what: 'tracker status history', table: 'tracker_status_history', column: 'delivery_location_id' },
    ]);
  }
}
