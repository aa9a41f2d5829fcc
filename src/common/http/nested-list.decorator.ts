import { applyDecorators, Get, type Type } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import type { CatalogueError } from '../errors/error-catalogue.js';
import { PageOf } from './pagination.js';

/**
 * `GET <parent>/:id/<items>` (e.g. `trackers/:id/visits`): a page of `item` seen from another
 * resource, filed under that resource's OpenAPI tag (the first path segment). `errors` are its
 * error responses, the missing parent's 404 first.
 */
export function NestedList(path: string, summary: string, item: Type, ...errors: CatalogueError[]): MethodDecorator {
  return applyDecorators(
    Get(path),
    ApiTags(path.split('/')[0]),
    ApiOperation({ summary }),
    ApiOkResponse({ type: PageOf(item) }),
    ApiErrors(...errors),
  );
}
