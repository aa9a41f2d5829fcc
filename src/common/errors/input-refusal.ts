import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { CatalogueError } from './catalogue-error.js';

export const INPUT_REFUSAL = 'http:input-refusal';
/** Marks the route's operation in the OpenAPI document, which then lists none of the usual 413/415/422. */
export const INPUT_REFUSAL_EXTENSION = 'x-input-refusal';

/** The route's own error for a refused input, given what was wrong (`body: malformed JSON`). */
export type InputRefusal = (detail: string) => CatalogueError;

/**
 * A route that answers every refusal of its input as one error of its own instead of the usual
 * 422 (validation failed), 413 (body over its limit) or 415 (an encoding or charset this service
 * does not read): a body that cannot be read (malformed, nested too deep, too large, …) and a
 * query or body the validation pipe refuses. The detail says what was wrong, as the 422 would
 * (`body: malformed JSON`, `id: must not contain control characters`), or the 413/415's own text.
 * For device dialects whose clients take only a 400 as "do not send this again". Failures of the
 * server (500, 503) and of authentication (401, 403) keep their answers.
 */
export function RefuseInputAs(error: InputRefusal): MethodDecorator {
  return applyDecorators(SetMetadata(INPUT_REFUSAL, error), ApiExtension(INPUT_REFUSAL_EXTENSION, true));
}
