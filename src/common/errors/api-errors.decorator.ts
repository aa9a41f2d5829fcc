import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { errorExampleBody, errorSchemaName, type CatalogueError } from './error-catalogue.js';

/**
 * `@ApiErrors(ERRORS.notEnoughPermissions, { status: 404, detail: TRACKER_NOT_FOUND })`: the
 * route's error responses, one per status, each a JSON `Error` (or `ValidationError` for 422)
 * whose examples are the given detail texts. Works on routes and controllers.
 */
export function ApiErrors(...errors: CatalogueError[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, CatalogueError[]>();
  for (const error of errors) byStatus.set(error.status, [...(byStatus.get(error.status) ?? []), error]);
  return applyDecorators(
    ...[...byStatus].map(([status, list]) =>
      ApiResponse({
        status,
        description: list.map((e) => e.summary ?? e.detail).join('; '),
        content: {
          'application/json': {
            schema: { $ref: `#/components/schemas/${errorSchemaName(status)}` },
            examples: Object.fromEntries(list.map((e) => [exampleKey(e.detail), { summary: e.summary ?? e.detail, value: errorExampleBody(e) }])),
          },
        },
      }),
    ),
  );
}

/** A readable, stable key for an example: its detail text in lower camel case. */
export function exampleKey(detail: string): string {
  const words = detail.replace(/[^A-Za-z0-9 ]+/g, ' ').trim().split(/\s+/).slice(0, 6);
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('') || 'error';
}
