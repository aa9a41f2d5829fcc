import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { PlacesService } from '../storage-locations/places/places.service.js';
import { DeliveryLocationsRepository } from './delivery-locations.repository.js';

export const DELIVERY_LOCATION_NOT_FOUND = 'Delivery location not found';

/** Delivery locations (contract §3): shared reference data, admin writes. */
@Injectable()
export class DeliveryLocationsService extends PlacesService {
  constructor(db: DataSource, repository: DeliveryLocationsRepository, cache: CacheService) {
    super('Delivery location', db, repository, cache);
  }
}
