import { Injectable } from '@nestjs/common';
import { DomainError, found } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PLACE_ERRORS } from './places.errors.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import type { CreatePlaceDto, ListPlacesQuery, UpdatePlaceDto } from './dto/place.dto.js';
import { toPlaceResponse, type PlaceResponse } from './dto/place.response.js';
import { DeliveryLocationsRepository, StorageLocationsRepository, type PlacesRepository } from './places.repository.js';

/** How a kind of place is named in error details: "Storage location not found". */
export type PlaceResource = 'Storage location' | 'Delivery location';

/**
 * Rules shared by storage and delivery locations. `resource` names the kind in error details:
 * "Storage location not found", "Storage location is still referenced by trackers".
 *
 * Analytics show location names (delivery_location_name, storage visits), so a rename invalidates
 * the analytics of every run whose trackers reference the place, after the commit; tracker lists
 * show only location ids and a place can only be deleted unreferenced, so they are untouched.
 */
export class PlacesService {
  constructor(
    readonly resource: PlaceResource,
    private readonly db: Db,
    private readonly places: PlacesRepository,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async list(query: ListPlacesQuery): Promise<Page<PlaceResponse>> {
    const { rows, total } = await this.places.list({ name: query.name }, query);
    return toPage(rows.map(toPlaceResponse), total, query);
  }

  async get(id: number): Promise<PlaceResponse> {
    return toPlaceResponse(found(await this.places.findById(id), this.notFound));
  }

  async create(body: CreatePlaceDto): Promise<PlaceResponse> {
    return toPlaceResponse(await this.places.insert(body));
  }

  async update(id: number, body: UpdatePlaceDto): Promise<PlaceResponse> {
    const { row, runIds } = await this.db.transaction(async () => {
      const current = found(await this.places.findById(id, true), this.notFound);
      const updated = await this.places.update(id, body);
      const renamed = body.name !== undefined && body.name !== current.name;
      return { row: updated!, runIds: renamed ? await this.places.runIdsShowing(id) : [] };
    });
    await this.invalidation.runsChanged(runIds);
    return toPlaceResponse(row);
  }

  /** The row is locked first, so nothing can start referencing it between the check and the delete. */
  async delete(id: number): Promise<PlaceResponse> {
    const row = await this.db.transaction(async () => {
      found(await this.places.findById(id, true), this.notFound);
      const reference = await this.places.firstReference(id);
      if (reference) throw new DomainError(ERRORS.stillReferencedBy(this.resource, reference.what));
      return (await this.places.delete(id))!;
    });
    return toPlaceResponse(row);
  }

  private get notFound() {
    return this.resource === 'Storage location'
      ? PLACE_ERRORS.storageLocationNotFound
      : PLACE_ERRORS.deliveryLocationNotFound;
  }
}

/** Storage locations: shared reference data, admin writes. */
@Injectable()
export class StorageLocationsService extends PlacesService {
  constructor(db: Db, repository: StorageLocationsRepository, invalidation: CacheInvalidation) {
    super('Storage location', db, repository, invalidation);
  }
}

/** Delivery locations: shared reference data, admin writes. */
@Injectable()
export class DeliveryLocationsService extends PlacesService {
  constructor(db: Db, repository: DeliveryLocationsRepository, invalidation: CacheInvalidation) {
    super('Delivery location', db, repository, invalidation);
  }
}
