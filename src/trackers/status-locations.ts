import { RequestValidationException } from '../common/errors/validation.exception.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';

/** The locations a status entry is about to be written with. */
export interface EntryLocations {
  storageLocationId: number | null;
  deliveryLocationId: number | null;
}

export const DELIVERY_REQUIRED = 'is required when status is DELIVERED';

/**
 * The one rule for which locations a status entry carries, shared by tracker creation (its first
 * entry), status changes through PUT and `POST /trackers/{id}/status`: a storage location exactly
 * for IN_STORAGE, a delivery location exactly for DELIVERED. A location that does not belong to
 * the status is refused rather than stored on an entry that cannot mean it. `deliveryMissing`
 * lets a caller that falls back to the tracker's destination say so.
 */
export function assertStatusLocations(
  status: TrackerStatus,
  entry: EntryLocations,
  deliveryMissing = DELIVERY_REQUIRED,
): void {
  if (status === 'IN_STORAGE' && entry.storageLocationId === null) {
    throw RequestValidationException.field('storage_location_id', 'is required when status is IN_STORAGE');
  }
  if (status !== 'IN_STORAGE' && entry.storageLocationId !== null) {
    throw RequestValidationException.field('storage_location_id', 'is only allowed when status is IN_STORAGE');
  }
  if (status === 'DELIVERED' && entry.deliveryLocationId === null) {
    throw RequestValidationException.field('delivery_location_id', deliveryMissing);
  }
  if (status !== 'DELIVERED' && entry.deliveryLocationId !== null) {
    throw RequestValidationException.field('delivery_location_id', 'is only allowed when status is DELIVERED');
  }
}

/**
 * The locations of an entry recording `status` for a tracker headed to `destination`: the
 * destination is where a DELIVERED entry was delivered and is carried by no other entry.
 */
export function entryLocations(
  status: TrackerStatus,
  storageLocationId: number | null,
  destination: number | null,
): EntryLocations {
  return { storageLocationId, deliveryLocationId: status === 'DELIVERED' ? destination : null };
}
