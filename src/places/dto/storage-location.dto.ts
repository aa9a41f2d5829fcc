import { CreatePlaceDto, ListPlacesQuery, UpdatePlaceDto } from './place.dto.js';
import { PlaceResponse } from './place.response.js';

/** Storage-location names for the shared location shapes (OpenAPI schema names). */
export class CreateStorageLocationDto extends CreatePlaceDto {}
export class UpdateStorageLocationDto extends UpdatePlaceDto {}
export class ListStorageLocationsQuery extends ListPlacesQuery {}
export class StorageLocationResponse extends PlaceResponse {}
