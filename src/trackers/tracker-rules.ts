import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { TrackerReferencesRepository } from './tracker-references.repository.js';

/** The errors the tracker services answer. */
export const trackerNotFound = () => new DomainError(ERRORS.trackerNotFound);
export const runNotFound = () => new DomainError(ERRORS.productionRunNotFound);
export const storageLocationNotFound = () => new DomainError(ERRORS.storageLocationNotFound);
export const deliveryLocationNotFound = () => new DomainError(ERRORS.deliveryLocationNotFound);
export const trackerNameTaken = (name: string, runId: number) => new DomainError(ERRORS.trackerExists(name, runId));

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
