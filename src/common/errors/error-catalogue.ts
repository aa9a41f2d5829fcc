/** One error a route can answer: its status and the `detail` text of the body. */
export interface CatalogueError {
  status: number;
  detail: string;
  /** When the detail alone does not say it (shown as the example's summary). */
  summary?: string;
}

/**
 * The errors every part of the service shares, declared once. Each error body is
 * `{"detail": string}`, plus `errors: [{field, message}]` for 422 (see HttpExceptionFilter and
 * RequestValidationException). The exception filter, the request-error answers and the auth guard
 * take their texts from here, and so does the OpenAPI document (ApiErrors and the document's
 * finishing step); route-specific details are declared beside their routes with ApiErrors too.
 */
export const ERRORS = {
  notAuthenticated: { status: 401, detail: 'Not authenticated', summary: 'No bearer token' },
  invalidCredentials: { status: 401, detail: 'Could not validate credentials', summary: 'Token invalid, expired or revoked' },
  notEnoughPermissions: { status: 403, detail: 'Not enough permissions', summary: 'Role not allowed' },
  notFound: { status: 404, detail: 'Not Found', summary: 'No such route' },
  alreadyExists: { status: 409, detail: 'Resource already exists' },
  stillReferenced: { status: 409, detail: 'Resource is still referenced' },
  bodyTooLarge: { status: 413, detail: 'Request body too large' },
  fileTooLarge: { status: 413, detail: 'File too large' },
  unsupportedEncoding: { status: 415, detail: 'Unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br' },
  unsupportedCharset: { status: 415, detail: 'Unsupported charset: send the body as UTF-8' },
  validationFailed: { status: 422, detail: 'Validation failed: name: must be a string', summary: 'A field failed validation' },
  internal: { status: 500, detail: 'Internal server error' },
  unavailable: { status: 503, detail: 'Service temporarily unavailable', summary: 'Database unreachable (sent with Retry-After)' },
} as const satisfies Record<string, CatalogueError>;

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
  if (error.status !== 422) return { detail: error.detail };
  const [field, message] = error.detail.replace(/^Validation failed: /, '').split(': ');
  return { detail: error.detail, errors: [{ field: field ?? 'body', message: message ?? error.detail }] };
}
