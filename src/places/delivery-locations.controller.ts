import { placesController } from './place-routes.js';
import {
  CreateDeliveryLocationDto,
  ListDeliveryLocationsQuery,
  DeliveryLocationResponse,
  UpdateDeliveryLocationDto,
} from './dto/delivery-location.dto.js';
import { DeliveryLocationsService } from './places.service.js';

/** CRUD of delivery locations under /delivery-locations. */
export class DeliveryLocationsController extends placesController({
  path: 'delivery-locations',
  resource: 'Delivery location',
  service: DeliveryLocationsService,
  dto: {
    create: CreateDeliveryLocationDto,
    update: UpdateDeliveryLocationDto,
    list: ListDeliveryLocationsQuery,
    response: DeliveryLocationResponse,
  },
}) {}
