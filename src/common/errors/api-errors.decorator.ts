import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { errorExampleBody, errorSchemaName, type CatalogueError } from './error-catalogue.js';

/**
 * `@ApiErrors(ERRORS.trackerNotFound, ERRORS.trackerExists())`: the route's error responses from
 * catalogue entries, one per status, each a JSON `Error` (or `ValidationError` for 422) whose
 * examples are the entries' detail texts (a builder called without arguments gives its example).
 * An entry spread with its own `summary` explains it for this route. Works on routes and controllers.
 */
export function ApiErrors(...errors: CatalogueError[]): MethodDecorator & ClassDecorator {
  return documentErrors(undefined, errors);
}

/**
 * ApiErrors for a route whose error bodies carry more than `detail` (e.g. an import's row errors):
 * `schema` documents that body, beside the standard one.
 */
export function ApiErrorsWithBody(
  schema: Record<string, unknown>,
  ...errors: CatalogueError[]
): MethodDecorator & ClassDecorator {
  return documentErrors(schema, errors);
}

function documentErrors(
  schema: Record<string, unknown> | undefined,
  errors: CatalogueError[],
): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, CatalogueError[]>();
  for (const error of errors) byStatus.set(error.status, [...(byStatus.get(error.status) ?? []), error]);
  return applyDecorators(
    ...[...byStatus].map(([status, list]) =>
      ApiResponse({
        status,
        description: list.map((e) => e.summary ?? e.detail).join('; '),
        content: {
          'application/json': {
            schema: schema ?? { $ref: `#/components/schemas/${errorSchemaName(status)}` },
            examples: Object.fromEntries(
              list.map((e, i) => [
                exampleKeyIn(list, i),
                { summary: e.summary ?? e.detail, value: errorExampleBody(e) },
              ]),
            ),
          },
        },
      }),
    ),
  );
}

/** The key of the i-th example: its exampleKey, or all the detail's words where the first six are shared. */
function exampleKeyIn(list: CatalogueError[], i: number): string {
  const key = exampleKey(list[i].detail);
  return list.some((e, j) => j !== i && exampleKey(e.detail) === key) ? exampleKey(list[i].detail, Infinity) : key;
}

/** A readable, stable key for an example: its detail text (the first `maxWords` words) in lower camel case. */
export function exampleKey(detail: string, maxWords = 6): string {
  const words = detail
    .replace(/[^A-Za-z0-9 ]+/g, ' ')
    .trim()
    .split(/\s+/)
    .slice(0, maxWords);
  return (
    words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('') || 'error'
  );
}
