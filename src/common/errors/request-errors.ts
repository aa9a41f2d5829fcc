import { HttpException } from '@nestjs/common';
import { RequestValidationException, type FieldError } from './validation.exception.js';
import { ERRORS, validationFailedDetail } from './error-catalogue.js';
import { TOO_DEEP } from './input-depth.js';

/** An error's answer: status, JSON body and extra headers. */
interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

interface ErrorFields {
  type?: unknown;
  status?: unknown;
  code?: unknown;
  field?: unknown;
  name?: unknown;
  message?: unknown;
}

/**
 * Failures to read a request — its body (body-parser, decompression, charset), a multipart form
 * (multer, busboy) or its path (percent-decoding) — answered like every other validation failure:
 * `422 {"detail": "Validation failed: <field>: <message>", errors: [{field, message}]}`. Only three
 * statuses stay apart: 413 for a body or file over its limit, 415 for a Content-Encoding, charset or
 * multipart subtype this service does not read, and 500 for the parser misconfigurations a client
 * cannot cause. Undefined when the exception is none of these.
 *
 * Express and Nest wrap these errors in an HttpException (a 400 with the parser's own message);
 * the original error is its `cause` and decides the answer.
 */
export function describeRequestError(exception: unknown): ErrorAnswer | undefined {
  const cause = (exception instanceof HttpException ? exception.cause : exception) as ErrorFields | undefined;
  if (typeof cause !== 'object' || cause === null) return undefined;
  if (cause.name === 'MulterError' && typeof cause.code === 'string') return multerAnswer(cause.code, cause.field);
  if (typeof cause.type === 'string' && typeof cause.status === 'number')
    return bodyParserAnswer(cause.type, cause.status);
  if (!(cause instanceof Error)) return undefined;
  const { code, status } = cause as ErrorFields;
  // Express's router, for a path segment that is not valid percent-encoding (`/clients/%ZZ`).
  if (cause instanceof URIError && status === 400) return invalid('path', 'invalid percent-encoding');
  // zlib, for a Content-Encoding whose data is not what it says (body-parser gives it no type).
  if (typeof code === 'string' && code.startsWith('Z_') && status === 400)
    return invalid('body', 'invalid compressed data');
  if (BUSBOY_MALFORMED.some((prefix) => cause.message.startsWith(prefix)))
    return invalid('body', 'malformed multipart body');
  // multer, when the connection fails mid-form: nobody reads the answer, but it is not a server fault.
  if (/^Request (aborted|closed)$/.test(cause.message)) return invalid('body', 'request body ended early');
  return undefined;
}

/**
 * What was wrong with a refused input, for a route that answers refusals as its own error
 * (RefuseInputAs): a validation failure's or an unreadable body's fields (`body: malformed JSON`),
 * or the 413/415's detail. Undefined for any other exception, including the 500 of a parser set
 * up wrong.
 */
export function inputRefusalDetail(exception: unknown): string | undefined {
  if (exception instanceof RequestValidationException) return fieldsDetail(exception.errors);
  const answer = describeRequestError(exception);
  if (!answer || answer.status >= 500) return undefined;
  const errors = answer.body.errors as FieldError[] | undefined;
  return errors ? fieldsDetail(errors) : String(answer.body.detail);
}

const fieldsDetail = (errors: readonly FieldError[]) => errors.map((e) => `${e.field}: ${e.message}`).join('; ');

/** busboy's messages for a multipart body it cannot parse. */
const BUSBOY_MALFORMED = [
  'Multipart: Boundary not found',
  'Malformed part header',
  'Unexpected end of form',
  'Unexpected end of file',
  'Malformed urlencoded form',
];

/** multer's error codes; the field is named when multer knows it and it says which part failed. */
const MULTER: Record<string, { message: string; namesField: boolean }> = {
  LIMIT_PART_COUNT: { message: 'too many parts', namesField: false },
  LIMIT_FILE_COUNT: { message: 'too many files', namesField: false },
  LIMIT_FIELD_KEY: { message: 'field name too long', namesField: false },
  LIMIT_FIELD_VALUE: { message: 'value too long', namesField: true },
  LIMIT_FIELD_COUNT: { message: 'too many fields', namesField: false },
  LIMIT_UNEXPECTED_FILE: { message: 'unexpected file field', namesField: true },
  MISSING_FIELD_NAME: { message: 'field name missing', namesField: false },
  LIMIT_FIELD_NESTING: { message: 'field name nested too deeply', namesField: true },
  LIMIT_FIELD_ARRAY_INDEX: { message: 'array index too large', namesField: true },
  INVALID_FIELD_NAME: { message: 'invalid field name', namesField: true },
  // The file's stream was cut (the request ended early); memory storage has no other cause.
  STREAM_DESTROYED: { message: 'request body ended early', namesField: false },
};

function multerAnswer(code: string, field: unknown): ErrorAnswer {
  // Routes that accept a file name its limit in their own answer (image and CSV uploads).
  if (code === 'LIMIT_FILE_SIZE') return { status: 413, body: { detail: ERRORS.fileTooLarge.detail } };
  const known = MULTER[code];
  if (!known) return invalid('body', 'malformed multipart body');
  return invalid(known.namesField && typeof field === 'string' && field !== '' ? field : 'body', known.message);
}

/** body-parser and raw-body error types. */
function bodyParserAnswer(type: string, status: number): ErrorAnswer {
  switch (type) {
    case 'entity.parse.failed':
      return invalid('body', 'malformed JSON');
    case 'entity.too.large':
      return { status: 413, body: { detail: ERRORS.bodyTooLarge.detail } };
    case 'entity.too.deep':
      return invalid('body', TOO_DEEP);
    case 'encoding.unsupported':
      return { status: 415, body: { detail: ERRORS.unsupportedEncoding.detail } };
    case 'charset.unsupported':
      return { status: 415, body: { detail: ERRORS.unsupportedCharset.detail } };
    case 'parameters.too.many':
      return invalid('body', 'too many parameters');
    case 'querystring.parse.rangeError':
      return invalid('body', 'parameters nested too deeply');
    case 'request.aborted':
      return invalid('body', 'request body ended early');
    case 'request.size.invalid':
      return invalid('body', 'length does not match Content-Length');
    default:
      // stream.encoding.set / stream.not.readable: the parser was set up wrong, a server fault.
      if (status >= 500) return { status: 500, body: { detail: ERRORS.internal.detail } };
      // entity.verify.failed and anything newer.
      return invalid('body', 'unreadable request body');
  }
}

function invalid(field: string, message: string): ErrorAnswer {
  const errors: FieldError[] = [{ field, message }];
  return { status: 422, body: { detail: validationFailedDetail(errors), errors } };
}
