import { Injectable } from '@nestjs/common';
import { Db } from '../infrastructure/database/db.js';
import { PlacesRepository } from '../places/places.repository.js';

/** SQL for delivery_locations (referenced by trackers and status entries through delivery_location_id). */
@Injectable()
export class DeliveryLocationsRepository extends PlacesRepository {
  constructor(db: Db) {
    super(db, 'delivery_locations', 'delivery_location_id');
  }
}
