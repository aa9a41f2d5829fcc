import { CreatePlaceDto, ListPlacesQuery, UpdatePlaceDto } from './place.dto.js';
import { PlaceResponse } from './place.response.js';

/** Delivery-location names for the shared location shapes (OpenAPI schema names). */
export class CreateDeliveryLocationDto extends CreatePlaceDto {}
export class UpdateDeliveryLocationDto extends UpdatePlaceDto {}
export class ListDeliveryLocationsQuery extends ListPlacesQuery {}
export class DeliveryLocationResponse extends PlaceResponse {}
