import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Put, Query, type Type } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { CreatePlaceDto, ListPlacesQuery, UpdatePlaceDto } from './place.dto.js';
import type { PlaceResponse } from './place.response.js';
import type { PlaceResource, PlacesService } from './places.service.js';

/** One kind of place as its routes present it. */
export interface PlaceKind {
  /** Route prefix and OpenAPI tag, e.g. 'storage-locations'. */
  path: string;
  /** Names the kind in summaries and details: 'Storage location'. */
  resource: PlaceResource;
  /** The kind's service (its resource name makes the 404/409 details). */
  service: Type<PlacesService>;
  /** The kind's named body, query and response classes, so OpenAPI shows its own schema names. */
  dto: { create: Type<CreatePlaceDto>; update: Type<UpdatePlaceDto>; list: Type<ListPlacesQuery>; response: Type<PlaceResponse> };
}

/**
 * The CRUD routes of a kind of place: shared reference data, every admin and user reads all of
 * them, admins write. `GET /<path>/{id}/trackers` lives in the trackers module.
 *
 * The handlers' parameter types are declared per kind after the class is built: validation and
 * OpenAPI read them, and they must be the kind's named DTO classes rather than the shared bases.
 */
export function placesController(kind: PlaceKind): Type<object> {
  const { resource } = kind;
  const { create: CreateDto, update: UpdateDto, list: ListQuery, response: Response } = kind.dto;
  const name = resource.toLowerCase();
  const notFound = resource === 'Storage location' ? ERRORS.storageLocationNotFound : ERRORS.deliveryLocationNotFound;

  @ApiTags(kind.path)
  @Controller(kind.path)
  class PlacesController {
    constructor(@Inject(kind.service) readonly places: PlacesService) {}

    @Get()
    @Access('admin', 'user')
    @ApiOperation({ summary: `List ${name}s` })
    @ApiOkResponse({ type: PageOf(Response) })
    list(@Query() query: ListPlacesQuery): Promise<Page<PlaceResponse>> {
      return this.places.list(query);
    }

    @Get(':id')
    @Access('admin', 'user')
    @ApiOperation({ summary: `Get a ${name}` })
    @ApiOkResponse({ type: Response })
    @ApiErrors(notFound)
    get(@IdParam() id: number): Promise<PlaceResponse> {
      return this.places.get(id);
    }

    @Post()
    @Access('admin')
    @ApiOperation({ summary: `Create a ${name} (admin)` })
    @ApiCreatedResponse({ type: Response })
    create(@Body() body: CreatePlaceDto): Promise<PlaceResponse> {
      return this.places.create(body);
    }

    @Put(':id')
    @Access('admin')
    @ApiOperation({ summary: `Update a ${name} (admin; partial body allowed; null clears address/latitude/longitude)` })
    @ApiOkResponse({ type: Response })
    @ApiErrors(notFound)
    update(@IdParam() id: number, @Body() body: UpdatePlaceDto): Promise<PlaceResponse> {
      return this.places.update(id, body);
    }

    @Delete(':id')
    @HttpCode(200)
    @Access('admin')
    @ApiOperation({ summary: `Delete a ${name} (admin); answers the deleted location` })
    @ApiOkResponse({ type: Response })
    @ApiErrors(notFound, ERRORS.stillReferencedBy(resource, 'trackers'), ERRORS.stillReferencedBy(resource, 'tracker status history'))
    delete(@IdParam() id: number): Promise<PlaceResponse> {
      return this.places.delete(id);
    }
  }

  const paramTypes: Record<string, unknown[]> = { list: [ListQuery], get: [Number], create: [CreateDto], update: [Number, UpdateDto], delete: [Number] };
  for (const [method, types] of Object.entries(paramTypes)) Reflect.defineMetadata('design:paramtypes', types, PlacesController.prototype, method);
  return PlacesController;
}
