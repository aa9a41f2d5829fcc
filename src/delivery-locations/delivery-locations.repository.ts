import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PlacesRepository } from '../storage-locations/places/places.repository.js';

/** SQL for delivery_locations (referenced by trackers and status entries through delivery_location_id). */
@Injectable()
export class DeliveryLocationsRepository extends PlacesRepository {
  constructor(db: DataSource) {
    super(db, 'delivery_locations', 'delivery_location_id');
  }
}
