import { AUTH_ERRORS } from './auth-errors.js';
import { catalogueError as e, type CatalogueError, type CatalogueErrorBuilder } from './catalogue-error.js';
import { RESOURCE_ERRORS } from './resource-errors.js';

export type { CatalogueError, CatalogueErrorBuilder } from './catalogue-error.js';

/** The detail of every 422 with field errors: `Validation failed: f: m; g: n`. */
export function validationFailedDetail(errors: readonly { field: string; message: string }[]): string {
  return `Validation failed: ${errors.map((error) => `${error.field}: ${error.message}`).join('; ')}`;
}

/** A 422 for one field (RequestValidationException answers it with `errors: [{field, message}]`). */
const invalidField = (field = 'name', message = 'must be a string') =>
  e('VALIDATION_FAILED', 422, validationFailedDetail([{ field, message }]));

/** Errors of the HTTP layer itself, every route can answer them. */
const HTTP_ERRORS = {
  notFound: e('NOT_FOUND', 404, 'Not Found', { summary: 'No such route' }),
  alreadyExists: e('ALREADY_EXISTS', 409, 'Resource already exists'),
  stillReferenced: e('STILL_REFERENCED', 409, 'Resource is still referenced'),
  bodyTooLarge: e('BODY_TOO_LARGE', 413, 'Request body too large'),
  fileTooLarge: e('FILE_TOO_LARGE', 413, 'File too large'),
  unsupportedEncoding: e(
    'UNSUPPORTED_ENCODING',
    415,
    'Unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br',
  ),
  unsupportedCharset: e('UNSUPPORTED_CHARSET', 415, 'Unsupported charset: send the body as UTF-8'),
  invalidField,
  validationFailed: { ...invalidField(), summary: 'A field failed validation' },
  unstorableText: invalidField('request', 'contains characters that cannot be stored'),
  internal: e('INTERNAL', 500, 'Internal server error'),
  healthCheckFailed: (cause = '<cause>') =>
    e('HEALTH_CHECK_FAILED', 500, `Health check failed: ${cause}`, { summary: 'The health check itself failed' }),
  unavailable: e('UNAVAILABLE', 503, 'Service temporarily unavailable', {
    summary: 'Database unreachable (sent with Retry-After)',
  }),
} as const;

/**
 * The cross-cutting errors: those of the HTTP layer, the guard and any resource (still referenced,
 * upload over its limit). Each feature declares its own errors in its folder
 * (`src/<feature>/<feature>.errors.ts`, built with the same `catalogueError`); the whole catalogue
 * is assembled at the application level (src/app.errors.ts), as common imports no feature.
 * An entry is declared once: a stable `code`, the status and the `detail` text; parameterized
 * details are functions that build the entry (called without arguments they give the OpenAPI
 * document's example). Each error body is `{"detail": string}` (plus the entry's `body` fields),
 * and `errors: [{field, message}]` for 422 (see HttpExceptionFilter and
 * RequestValidationException). Services throw them as DomainError; routes document them with
 * ApiErrors.
 */
export const ERRORS = {
  ...HTTP_ERRORS,
  ...AUTH_ERRORS,
  ...RESOURCE_ERRORS,
} as const satisfies Record<string, CatalogueError | CatalogueErrorBuilder>;

/** The body schemas of every error response, by the name they have in the document. */
export const ERROR_SCHEMAS = {
  Error: {
    type: 'object',
    required: ['detail'],
    properties: { detail: { type: 'string', description: 'What went wrong, for people.' } },
  },
  ValidationError: {
    type: 'object',
    required: ['detail', 'errors'],
    properties: {
      detail: { type: 'string', description: '`Validation failed: ` followed by the fields and their messages.' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['field', 'message'],
          properties: {
            field: { type: 'string', description: 'The field, query or path parameter, or `body`.' },
            message: { type: 'string' },
          },
        },
      },
    },
  },
} as const;

/** The schema an error body of this status has. */
export function errorSchemaName(status: number): keyof typeof ERROR_SCHEMAS {
  return status === 422 ? 'ValidationError' : 'Error';
}

/** The example body of a catalogue error. */
export function errorExampleBody(error: CatalogueError): Record<string, unknown> {
  if (error.status !== 422 || !error.detail.startsWith('Validation failed: '))
    return { detail: error.detail, ...error.body };
  const rest = error.detail.slice('Validation failed: '.length);
  const colon = rest.indexOf(': ');
  const [field, message] = colon < 0 ? ['body', rest] : [rest.slice(0, colon), rest.slice(colon + 2)];
  return { detail: error.detail, errors: [{ field, message }] };
}
