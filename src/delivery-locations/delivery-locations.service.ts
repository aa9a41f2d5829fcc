import { Injectable } from '@nestjs/common';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { Db } from '../infrastructure/database/db.js';
import { PlacesService } from '../places/places.service.js';
import { DeliveryLocationsRepository } from './delivery-locations.repository.js';

export const DELIVERY_LOCATION_NOT_FOUND = 'Delivery location not found';

/** Delivery locations: shared reference data, admin writes. */
@Injectable()
export class DeliveryLocationsService extends PlacesService {
  constructor(db: Db, repository: DeliveryLocationsRepository, cache: CacheService) {
    super('Delivery location', db, repository, cache);
  }
}
