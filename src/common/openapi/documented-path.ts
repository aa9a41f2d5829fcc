import { ApiExtension } from '@nestjs/swagger';

type Json = Record<string, unknown>;

const EXTENSION = 'x-documented-path';

/**
 * Documents a route under a more precise path template than its Express route, for two routes
 * whose Express paths would otherwise be the same template (OpenAPI forbids paths that differ
 * only in parameter names). `@DocumentedPath('/api/v1/images/{storage_name}.{extension}')` on
 * the `:storage_filename` route: the URLs are the same, the document tells them apart. The
 * route's `@ApiParam`s describe the template's parameters.
 */
export function DocumentedPath(template: string): MethodDecorator {
  return ApiExtension(EXTENSION, template);
}

/** Moves each operation marked by DocumentedPath to its template, keeping its parameters that the template names. */
export function applyDocumentedPaths(document: Json): void {
  const paths = document.paths as Record<string, Json>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      const template = operation[EXTENSION];
      if (typeof template !== 'string') continue;
      delete operation[EXTENSION];
      const names = new Set([...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
      operation.parameters = ((operation.parameters ?? []) as Json[]).filter(
        (p) => p.in !== 'path' || names.has(String(p.name)),
      );
      (paths[template] ??= {})[method] = operation;
      delete item[method];
    }
    if (Object.keys(item).length === 0) delete paths[path];
  }
}
