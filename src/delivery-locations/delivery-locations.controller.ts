import { placesController } from '../places/places.controller.js';
import {
  CreateDeliveryLocationDto,
  ListDeliveryLocationsQuery,
  DeliveryLocationResponse,
  UpdateDeliveryLocationDto,
} from './dto/delivery-location.dto.js';
import { DELIVERY_LOCATION, DeliveryLocationsService } from './delivery-locations.service.js';

/** CRUD of delivery locations under /delivery-locations. */
export class DeliveryLocationsController extends placesController({
  path: 'delivery-locations',
  resource: DELIVERY_LOCATION,
  service: DeliveryLocationsService,
  dto: {
    create: CreateDeliveryLocationDto,
    update: UpdateDeliveryLocationDto,
    list: ListDeliveryLocationsQuery,
    response: DeliveryLocationResponse,
  },
}) {}
