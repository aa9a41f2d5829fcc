import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of storage and delivery locations. */
export const PLACE_ERRORS = {
  storageLocationNotFound: e('STORAGE_LOCATION_NOT_FOUND', 404, 'Storage location not found'),
  deliveryLocationNotFound: e('DELIVERY_LOCATION_NOT_FOUND', 404, 'Delivery location not found'),
} as const;
