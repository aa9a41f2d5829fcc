import type { Type } from '@nestjs/common';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PLACE_ERRORS } from './places.errors.js';
import { crudController } from '../common/http/crud.controller.js';
import type { CreatePlaceDto, ListPlacesQuery, UpdatePlaceDto } from './dto/place.dto.js';
import type { PlaceResponse } from './dto/place.response.js';
import type { PlaceResource, PlacesService } from './places.service.js';

/** One kind of place as its routes present it. */
interface PlaceKind {
  /** Route prefix and OpenAPI tag, e.g. 'storage-locations'. */
  path: string;
  /** Names the kind in summaries and details: 'Storage location'. */
  resource: PlaceResource;
  /** The kind's service (its resource name makes the 404/409 details). */
  service: Type<PlacesService>;
  /** The kind's named body, query and response classes, so OpenAPI shows its own schema names. */
  dto: {
    create: Type<CreatePlaceDto>;
    update: Type<UpdatePlaceDto>;
    list: Type<ListPlacesQuery>;
    response: Type<PlaceResponse>;
  };
}

/**
 * The CRUD routes of a kind of place: shared reference data, every admin and user reads all of
 * them, admins write. `GET /<path>/{id}/trackers` lives in the trackers module.
 */
export function placesController(kind: PlaceKind): Type<object> {
  const { resource } = kind;
  const name = resource.toLowerCase();
  const notFound =
    resource === 'Storage location' ? PLACE_ERRORS.storageLocationNotFound : PLACE_ERRORS.deliveryLocationNotFound;
  return crudController({
    path: kind.path,
    service: kind.service,
    scoped: false,
    dto: kind.dto,
    routes: {
      list: { summary: `List ${name}s` },
      get: { summary: `Get a ${name}`, errors: [notFound] },
      create: { summary: `Create a ${name} (admin)` },
      update: {
        summary: `Update a ${name} (admin; partial body allowed; null clears address/latitude/longitude)`,
        errors: [notFound],
      },
      delete: {
        summary: `Delete a ${name} (admin); answers the deleted location`,
        errors: [
          notFound,
          ERRORS.stillReferencedBy(resource, 'trackers'),
          ERRORS.stillReferencedBy(resource, 'tracker status history'),
        ],
      },
    },
  });
}
