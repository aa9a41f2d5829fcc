import { Injectable } from '@nestjs/common';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { PlacesService } from '../places/places.service.js';
import { DeliveryLocationsRepository } from './delivery-locations.repository.js';

/** Names the kind in summaries and error details. */
export const DELIVERY_LOCATION = 'Delivery location';

/** Delivery locations: shared reference data, admin writes. */
@Injectable()
export class DeliveryLocationsService extends PlacesService {
  constructor(db: Db, repository: DeliveryLocationsRepository, invalidation: CacheInvalidation) {
    super(DELIVERY_LOCATION, db, repository, invalidation);
  }
}
