import { DomainError } from '../common/errors/domain-error.js';
import { isUniqueViolation } from '../infrastructure/database/sql-state.js';
import { PLACE_ERRORS } from '../places/places.errors.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import type { TrackerReferencesRepository } from './tracker-references.repository.js';

/** The errors the tracker services answer. */
export const trackerNotFound = () => new DomainError(TRACKER_ERRORS.trackerNotFound);
export const runNotFound = () => new DomainError(PRODUCTION_RUN_ERRORS.productionRunNotFound);
export const storageLocationNotFound = () => new DomainError(PLACE_ERRORS.storageLocationNotFound);
export const deliveryLocationNotFound = () => new DomainError(PLACE_ERRORS.deliveryLocationNotFound);
export const trackerNameTaken = (name: string, runId: number) =>
  new DomainError(TRACKER_ERRORS.trackerExists(name, runId));

/** 404 for a named storage or delivery location that does not exist (null: none named). */
export async function requireLocations(
  references: TrackerReferencesRepository,
  storageLocationId: number | null,
  deliveryLocationId: number | null,
): Promise<void> {
  if (storageLocationId !== null && !(await references.locationExists('storage', storageLocationId)))
    throw storageLocationNotFound();
  if (deliveryLocationId !== null && !(await references.locationExists('delivery', deliveryLocationId)))
    throw deliveryLocationNotFound();
}

/** The unique index that keeps device ids unique among trackers. */
export const DEVICE_ID_INDEX = 'trackers_device_id_key';

/** A catch handler: a write refused by the device-id index answers 409 naming the id; other errors pass. */
export function rethrowDeviceIdInUse(deviceId: string | null | undefined): (error: unknown) => never {
  return (error: unknown) => {
    if (deviceId && isUniqueViolation(error, DEVICE_ID_INDEX))
      throw new DomainError(TRACKER_ERRORS.deviceIdInUse(deviceId));
    throw error;
  };
}
