import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { randomUUID } from 'node:crypto';
import { mkdir, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { catchError, from, mergeMap, throwError, type Observable } from 'rxjs';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS, type CatalogueError } from '../common/errors/error-catalogue.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { formatByteSize } from './image-names.js';
import { pipeThroughHeaderSanitizer } from './multipart-header-sanitizer.js';

export const UPLOAD_FIELD = 'file';

/** The part multer leaves on `req.file` (disk storage): the upload as a temporary file. */
export interface UploadedImageFile {
  originalname: string;
  mimetype: string;
  size: number;
  path: string;
}

/** Temporary upload names: dot-prefixed, so they can never be a stored (servable) name. */
const temporaryName = () => `.upload-${randomUUID()}.tmp`;

/**
 * Streams the one multipart file field `file` to a temporary file in UPLOAD_DIR, stopping at
 * IMAGE_MAX_BYTES, so an upload costs a few stream buffers of memory whatever its size and
 * however many run at once. The service inspects that file and moves it into place (same
 * directory, so the move is an atomic rename); on any failure the temporary file is deleted
 * before the answer goes out (multer deletes a partial one itself). Multer's errors become the
 * API's answers: over the limit → 413 with the limit in the detail; a malformed or
 * unexpected multipart body → 422.
 */
@Injectable()
export class ImageUploadInterceptor implements NestInterceptor {
  private readonly parse: RequestHandler;
  private readonly tooLarge: CatalogueError;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const directory = resolve(config.uploadDir);
    const options: multer.Options & { streamHandler: typeof pipeThroughHeaderSanitizer } = {
      storage: multer.diskStorage({
        destination: (_req, _file, callback) => {
          mkdir(directory, { recursive: true }).then(
            () => callback(null, directory),
            (error: Error) => callback(error, directory),
          );
        },
        filename: (_req, _file, callback) => callback(null, temporaryName()),
      }),
      // Browsers send UTF-8 file names without declaring a charset.
      defParamCharset: 'utf8',
      // The full client name reaches sanitizeOriginalFilename, the one place that reduces it.
      preservePath: true,
      streamHandler: pipeThroughHeaderSanitizer,
      limits: {
        fileSize: config.imageMaxBytes,
        files: 1,
        fields: 20,
        fieldSize: 64 * 1024,
        parts: 25,
        headerPairs: 100,
      },
    };
    this.parse = multer(options).single(UPLOAD_FIELD);
    this.tooLarge = ERRORS.fileOverLimit(formatByteSize(config.imageMaxBytes));
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    await new Promise<void>((done, reject) => {
      this.parse(request, http.getResponse<Response>(), (error?: unknown) =>
        error ? reject(this.translate(error)) : done(),
      );
    });
    const temporary = (request.file as UploadedImageFile | undefined)?.path;
    if (temporary === undefined) return next.handle();
    // A stored upload was renamed away already; anything else leaves its temporary file behind.
    return next
      .handle()
      .pipe(
        catchError((error: unknown) =>
          from(unlink(temporary).catch(() => undefined)).pipe(mergeMap(() => throwError(() => error))),
        ),
      );
  }

  private translate(error: unknown): unknown {
    if (error instanceof multer.MulterError) {
      switch (error.code) {
        case 'LIMIT_FILE_SIZE':
          return new DomainError(this.tooLarge);
        case 'LIMIT_FILE_COUNT':
          return RequestValidationException.field(UPLOAD_FIELD, 'exactly one file is accepted');
        case 'LIMIT_UNEXPECTED_FILE':
          return RequestValidationException.field(
            error.field ?? 'body',
            `unexpected file field; send the image in the "${UPLOAD_FIELD}" field`,
          );
        default:
          return RequestValidationException.field('body', 'too many or too large multipart fields');
      }
    }
    // busboy's parse errors (no boundary, truncated body, bad part headers) are client errors.
    if (
      error instanceof Error &&
      /multipart|boundary|unexpected end of form|malformed part header/i.test(error.message)
    ) {
      return RequestValidationException.field('body', 'malformed multipart body');
    }
    // The client went away mid-upload: nobody reads the answer, but it is not a server failure.
    if (error instanceof Error && /^request (aborted|closed)$/i.test(error.message)) {
      return RequestValidationException.field('body', 'request body ended early');
    }
    return error;
  }
}
