import { Injectable } from '@nestjs/common';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { Db } from '../infrastructure/database/db.js';
import { PlacesService } from '../places/places.service.js';
import { DeliveryLocationsRepository } from './delivery-locations.repository.js';

/** Names the kind in summaries and error details. */
export const DELIVERY_LOCATION = 'Delivery location';
export const DELIVERY_LOCATION_NOT_FOUND = `${DELIVERY_LOCATION} not found`;

/** Delivery locations: shared reference data, admin writes. */
@Injectable()
export class DeliveryLocationsService extends PlacesService {
  constructor(db: Db, repository: DeliveryLocationsRepository, cache: CacheService) {
    super(DELIVERY_LOCATION, db, repository, cache);
  }
}
