import { DomainError } from '../common/errors/domain-error.js';
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
