import { BadRequestException, PayloadTooLargeException } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import multer from 'multer';
import { describeRequestError } from '../../src/common/errors/request-errors.js';

/** What Express's error path hands the exception filter: the adapter's wrapping of a raw error. */
const viaExpress = (error: Error) => new ExpressAdapter().mapException(error);

function httpError(status: number, message: string, props: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: status < 500, ...props });
}

const invalid = (field: string, message: string) => ({
  status: 422,
  body: { detail: `Validation failed: ${field}: ${message}`, errors: [{ field, message }] },
});

describe('describeRequestError: multer', () => {
  const wrap = (code: string, field?: string) => {
    const error = new multer.MulterError(code as multer.ErrorCode, field);
    return code === 'LIMIT_FILE_SIZE'
      ? new PayloadTooLargeException(error.message, { cause: error })
      : new BadRequestException(error.message, { cause: error });
  };

  it.each([
    ['LIMIT_PART_COUNT', undefined, invalid('body', 'too many parts')],
    ['LIMIT_FILE_COUNT', 'file', invalid('body', 'too many files')],
    ['LIMIT_FIELD_KEY', undefined, invalid('body', 'field name too long')],
    ['LIMIT_FIELD_VALUE', 'password', invalid('password', 'value too long')],
    ['LIMIT_FIELD_COUNT', undefined, invalid('body', 'too many fields')],
    ['LIMIT_UNEXPECTED_FILE', 'f', invalid('f', 'unexpected file field')],
    ['MISSING_FIELD_NAME', undefined, invalid('body', 'field name missing')],
    ['LIMIT_FIELD_NESTING', 'a[b][c]', invalid('a[b][c]', 'field name nested too deeply')],
    ['LIMIT_FIELD_ARRAY_INDEX', 'a[5000]', invalid('a[5000]', 'array index too large')],
    ['INVALID_FIELD_NAME', 'a[', invalid('a[', 'invalid field name')],
    ['STREAM_DESTROYED', 'file', invalid('body', 'request body ended early')],
    ['SOMETHING_NEW', undefined, invalid('body', 'malformed multipart body')],
    ['LIMIT_FILE_SIZE', 'file', { status: 413, body: { detail: 'File too large' } }],
  ])('%s (field %s)', (code, field, expected) => {
    expect(describeRequestError(wrap(code, field))).toEqual(expected);
  });

  it('busboy parse failures and a connection lost mid-form', () => {
    for (const message of [
      'Multipart: Boundary not found',
      'Malformed part header',
      'Unexpected end of form',
      'Unexpected end of file',
    ]) {
      expect(describeRequestError(new BadRequestException(message, { cause: new Error(message) }))).toEqual(
        invalid('body', 'malformed multipart body'),
      );
    }
    expect(describeRequestError(new Error('Request aborted'))).toEqual(invalid('body', 'request body ended early'));
    expect(describeRequestError(new Error('Request closed'))).toEqual(invalid('body', 'request body ended early'));
  });
});

describe('describeRequestError: body-parser and raw-body', () => {
  it.each([
    ['entity.parse.failed', 400, invalid('body', 'malformed JSON')],
    ['entity.too.large', 413, { status: 413, body: { detail: 'Request body too large' } }],
    [
      'encoding.unsupported',
      415,
      {
        status: 415,
        body: { detail: 'Unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br' },
      },
    ],
    ['charset.unsupported', 415, { status: 415, body: { detail: 'Unsupported charset: send the body as UTF-8' } }],
    ['parameters.too.many', 413, invalid('body', 'too many parameters')],
    ['querystring.parse.rangeError', 400, invalid('body', 'parameters nested too deeply')],
    ['request.aborted', 400, invalid('body', 'request body ended early')],
    ['request.size.invalid', 400, invalid('body', 'length does not match Content-Length')],
    ['entity.verify.failed', 403, invalid('body', 'unreadable request body')],
    ['stream.encoding.set', 500, { status: 500, body: { detail: 'Internal server error' } }],
    ['stream.not.readable', 500, { status: 500, body: { detail: 'Internal server error' } }],
  ])('%s (%d)', (type, status, expected) => {
    const error = httpError(status, 'parser message', { type });
    expect(describeRequestError(status < 500 ? viaExpress(error) : error)).toEqual(expected);
  });

  it('a zlib failure (no type) is invalid compressed data', () => {
    const zlib = httpError(400, 'incorrect header check', { code: 'Z_DATA_ERROR', errno: -3 });
    expect(describeRequestError(viaExpress(zlib))).toEqual(invalid('body', 'invalid compressed data'));
  });
});

describe('describeRequestError: paths and everything else', () => {
  it('a percent-decoding failure of the router is a path error', () => {
    const error = Object.assign(new URIError("Failed to decode param '%ZZ'"), { status: 400 });
    expect(describeRequestError(viaExpress(error))).toEqual(invalid('path', 'invalid percent-encoding'));
  });

  it("leaves the application's own exceptions and unknown errors alone", () => {
    expect(describeRequestError(new BadRequestException({ detail: 'Current password is incorrect' }))).toBeUndefined();
    expect(describeRequestError(new Error('boom'))).toBeUndefined();
    expect(describeRequestError(new URIError('URI malformed'))).toBeUndefined();
    expect(describeRequestError(undefined)).toBeUndefined();
    expect(describeRequestError('text')).toBeUndefined();
  });
});
