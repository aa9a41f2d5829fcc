import { SetMetadata } from '@nestjs/common';
import { MAX_INPUT_DEPTH, TOO_DEEP } from '../errors/input-depth.js';
import { verifyUtf8Json } from './text-input.js';

/** Most routes take a few fields: a JSON body is at most this many bytes unless the route says otherwise. */
export const DEFAULT_JSON_BODY_LIMIT = 64 * 1024;
/** Form bodies (the OAuth2 login form) are a few fields on every route. */
export const FORM_BODY_LIMIT = 64 * 1024;

export const BODY_LIMIT = 'http:body-limit';

/**
 * A route's (or every route of a controller's) JSON body limit in bytes, over which the body is
 * refused with 413 while it is being read, before anything parses it.
 */
export const BodyLimit = (bytes: number): MethodDecorator & ClassDecorator => SetMetadata(BODY_LIMIT, bytes);

const OPEN_SQUARE = 0x5b;
const OPEN_CURLY = 0x7b;
const CLOSE_SQUARE = 0x5d;
const CLOSE_CURLY = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether a JSON text opens more than MAX_INPUT_DEPTH arrays or objects inside each other, judged
 * on its characters alone in one pass that stops at the first level too deep: brackets inside
 * strings do not count, and a backslash in a string skips the character after it. In UTF-8 every
 * byte of a multi-byte character is ≥ 0x80, so the bytes can be scanned as they are (text decoded
 * from another charset is scanned as UTF-8).
 */
export function nestedTooDeep(text: Uint8Array | string): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_SQUARE || c === OPEN_CURLY) {
      if (++depth > MAX_INPUT_DEPTH) return true;
    } else if (c === CLOSE_SQUARE || c === CLOSE_CURLY) {
      depth--;
    }
  }
  return false;
}

const UTF8 = /^utf-?8$/i;

/**
 * body-parser `verify` hook for JSON, run on the raw bytes after the size limit and before
 * `JSON.parse`: invalid UTF-8 is malformed JSON (422), and a body nested deeper than the bound is
 * refused (422 `body: must not be nested more than 32 levels deep`) without ever being parsed, so
 * no nesting, however deep, costs more than one scan of at most the route's limit.
 */
export function verifyJsonBody(req: unknown, res: unknown, body: Buffer, encoding: string | null): void {
  verifyUtf8Json(req, res, body, encoding);
  if (nestedTooDeep(encoding === null || UTF8.test(encoding) ? body : decode(body, encoding))) {
    throw Object.assign(new Error(TOO_DEEP), { status: 422, type: 'entity.too.deep' });
  }
}

/** Other UTF encodings body-parser accepts; one the platform cannot decode is refused (415) like any other charset. */
function decode(body: Buffer, encoding: string): string {
  try {
    return new TextDecoder(encoding).decode(body);
  } catch {
    throw Object.assign(new Error(`unsupported charset "${encoding}"`), { status: 415, type: 'charset.unsupported' });
  }
}
