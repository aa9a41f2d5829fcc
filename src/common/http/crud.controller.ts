import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Patch,
  Post,
  Put,
  Query,
  type Type,
} from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AccessScope } from '../auth/access-scope.js';
import { Access, AccessWithoutKeys } from '../auth/access.decorator.js';
import { CurrentScope } from '../auth/current-user.decorator.js';
import type { Role } from '../auth/roles.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import type { CatalogueError } from '../errors/error-catalogue.js';
import { PageOf, type Page } from './pagination.js';
import { IdParam } from './parse-id.pipe.js';

/** A service whose reads and writes take the caller's scope first (data visible per client). */
interface ScopedCrudService {
  list(scope: AccessScope, query: object): Promise<Page<unknown>>;
  get(scope: AccessScope, id: number): Promise<unknown>;
  create(scope: AccessScope, body: object): Promise<unknown>;
  update(scope: AccessScope, id: number, body: object): Promise<unknown>;
  delete(scope: AccessScope, id: number): Promise<unknown>;
}

/** A service of data every permitted caller sees whole (shared reference data, admin-only data). */
interface UnscopedCrudService {
  list(query: object): Promise<Page<unknown>>;
  get(id: number): Promise<unknown>;
  create(body: object): Promise<unknown>;
  update(id: number, body: object): Promise<unknown>;
  delete(id: number): Promise<unknown>;
}

type CrudOperation = 'list' | 'get' | 'create' | 'update' | 'delete';

/** How one route is documented: its summary and its error responses (401/403 come with the roles). */
interface CrudRoute {
  summary: string;
  errors?: CatalogueError[];
}

interface CrudResourceBase {
  /** Route prefix and OpenAPI tag, e.g. 'brands'. */
  path: string;
  /** The resource's named query, body and response classes: validation and OpenAPI read them. */
  dto: { list: Type; create: Type; update: Type; response: Type };
  /** Who reads (list, get) and who writes; by default every admin and user reads, admins write. */
  access?: { read: Role[]; write: Role[] };
  /** The verb of an update: PUT (partial bodies allowed) unless the resource says PATCH. */
  updateVerb?: 'put' | 'patch';
  /** Whether API keys may call the routes (by their scope); false: a person's token only. Default true. */
  apiKeys?: boolean;
  routes: Record<CrudOperation, CrudRoute>;
}

/** A resource's routes and the service behind them, scoped (scope first) or not. */
type CrudResource<S> = CrudResourceBase &
  ({ scoped: true; service: Type<S & ScopedCrudService> } | { scoped: false; service: Type<S & UnscopedCrudService> });

const REFERENCE_DATA_ACCESS: { read: Role[]; write: Role[] } = { read: ['admin', 'user'], write: ['admin'] };

/**
 * The five CRUD routes of a resource: `GET /<path>` (a page), `POST /<path>` (201) and
 * `GET|PUT|DELETE /<path>/{id}` (PATCH for PUT where the resource says so), each answering the
 * resource's response (a delete answers the deleted row).
 * Extend the result to name the controller (OpenAPI operation ids come from the class name) and
 * to add routes; the subclass reaches the service as `this.service`. Literal paths a subclass
 * declares (`/users/me`) are registered before these, so they are never taken for an id.
 *
 * The handlers' parameter types are declared per resource after the class is built: validation
 * and OpenAPI read them, and they must be the resource's own DTO classes.
 */
export function crudController<S>(resource: CrudResource<S>): Type<{ readonly service: S }> {
  const { routes, dto } = resource;
  const { read, write } = resource.access ?? REFERENCE_DATA_ACCESS;
  const Update = resource.updateVerb === 'patch' ? Patch : Put;
  const Allow = resource.apiKeys === false ? AccessWithoutKeys : Access;

  /** A route's roles, summary, success response and error responses (401/403 come with the roles). */
  const documented = (operation: CrudOperation, roles: Role[], success: MethodDecorator) =>
    applyDecorators(
      Allow(...roles),
      ApiOperation({ summary: routes[operation].summary }),
      success,
      ApiErrors(...(routes[operation].errors ?? [])),
    );

  @ApiTags(resource.path)
  @Controller(resource.path)
  class CrudController {
    private readonly scoped: ScopedCrudService;

    constructor(@Inject(resource.service) readonly service: S) {
      this.scoped = resource.scoped ? (service as ScopedCrudService) : ignoringScope(service as UnscopedCrudService);
    }

    @Get()
    @documented('list', read, ApiOkResponse({ type: PageOf(dto.response) }))
    list(@CurrentScope() scope: AccessScope, @Query() query: object): Promise<Page<unknown>> {
      return this.scoped.list(scope, query);
    }

    @Get(':id')
    @documented('get', read, ApiOkResponse({ type: dto.response }))
    get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<unknown> {
      return this.scoped.get(scope, id);
    }

    @Post()
    @documented('create', write, ApiCreatedResponse({ type: dto.response }))
    create(@CurrentScope() scope: AccessScope, @Body() body: object): Promise<unknown> {
      return this.scoped.create(scope, body);
    }

    @Update(':id')
    @documented('update', write, ApiOkResponse({ type: dto.response }))
    update(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Body() body: object): Promise<unknown> {
      return this.scoped.update(scope, id, body);
    }

    @Delete(':id')
    @HttpCode(200)
    @documented('delete', write, ApiOkResponse({ type: dto.response }))
    delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<unknown> {
      return this.scoped.delete(scope, id);
    }
  }

  const paramTypes: Record<CrudOperation, unknown[]> = {
    list: [Object, dto.list],
    get: [Object, Number],
    create: [Object, dto.create],
    update: [Object, Number, dto.update],
    delete: [Object, Number],
  };
  for (const [method, types] of Object.entries(paramTypes))
    Reflect.defineMetadata('design:paramtypes', types, CrudController.prototype, method);
  return CrudController;
}

/** An unscoped service behind the scoped calls: the scope is not needed to answer. */
function ignoringScope(service: UnscopedCrudService): ScopedCrudService {
  return {
    list: (_scope, query) => service.list(query),
    get: (_scope, id) => service.get(id),
    create: (_scope, body) => service.create(body),
    update: (_scope, id, body) => service.update(id, body),
    delete: (_scope, id) => service.delete(id),
  };
}
