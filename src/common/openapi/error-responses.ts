import { exampleKey } from '../errors/api-errors.decorator.js';
import { ERRORS, errorExampleBody, errorSchemaName, type CatalogueError } from '../errors/error-catalogue.js';
import { INPUT_REFUSAL_EXTENSION } from '../errors/input-refusal.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The catalogue's answer for a status every route of a kind can give. */
const GENERIC: Record<number, CatalogueError[]> = {
  413: [ERRORS.bodyTooLarge],
  415: [ERRORS.unsupportedEncoding, ERRORS.unsupportedCharset],
  422: [ERRORS.validationFailed],
  500: [ERRORS.internal],
  503: [ERRORS.unavailable],
};

const REASONS: Record<number, string> = {
  413: 'Request body over its limit',
  415: 'Content-Encoding or charset this service does not read',
  422: 'A parameter or body field failed validation',
  500: 'Unexpected server fault (logged with the request id)',
  503: 'Database unreachable or a query timed out',
};

/**
 * Gives every 4xx/5xx response of an operation a JSON body schema (`Error`, or `ValidationError`
 * for 422) with its known detail texts as examples, and adds the responses every operation of its
 * kind can give: 422 to routes with parameters or a body, 413 and 415 to routes with a body, 500
 * and 503 to all; a route that answers refused input as its own error (RefuseInputAs) gets neither
 * 422 nor 413 nor 415. A response that already documents its own body (e.g. a CSV import's row
 * errors) keeps it as an alternative.
 */
export function documentErrors(operation: Json): void {
  const responses = (operation.responses ??= {}) as Record<string, Json>;
  const ownRefusal = operation[INPUT_REFUSAL_EXTENSION] === true;
  delete operation[INPUT_REFUSAL_EXTENSION];
  const hasBody = operation.requestBody !== undefined && !ownRefusal;
  const hasInput = !ownRefusal && (hasBody || ((operation.parameters as unknown[] | undefined)?.length ?? 0) > 0);
  const generic = [...(hasInput ? [422] : []), ...(hasBody ? [413, 415] : []), 500, 503];
  for (const status of generic) responses[status] ??= { description: REASONS[status] };
  for (const [code, response] of Object.entries(responses)) {
    const status = Number(code);
    if (!(status >= 400)) continue;
    responses[code] = errorResponse(status, response);
  }
}

function errorResponse(status: number, response: Json): Json {
  const json = ((response.content as Json | undefined)?.['application/json'] ?? {}) as Json;
  const examples = { ...((json.examples as Json | undefined) ?? {}) };
  const description = String(response.description ?? '');
  if (Object.keys(examples).length === 0) {
    for (const error of GENERIC[status] ?? [])
      examples[exampleKey(error.detail)] = { summary: error.summary ?? error.detail, value: errorExampleBody(error) };
  }
  const own = json.schema as Json | undefined;
  const standard = ref(errorSchemaName(status));
  const schema = own && own.$ref !== standard.$ref ? { anyOf: [own, standard] } : standard;
  return {
    ...response,
    description: description || REASONS[status] || 'Error',
    content: { 'application/json': { schema, ...(Object.keys(examples).length ? { examples } : {}) } },
  };
}
