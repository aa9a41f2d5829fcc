import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import type { Observable } from 'rxjs';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS, type CatalogueError } from '../common/errors/error-catalogue.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';

/** "20 MB", "512 KB", "100 bytes": the limit as people read it. */
export function formatBytes(bytes: number): string {
  const units: [number, string][] = [
    [1024 * 1024, 'MB'],
    [1024, 'KB'],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/**
 * Reads the multipart field `file` into memory, at most IMPORT_MAX_BYTES: a bigger
 * file is 413 with the limit in the message, a missing file or an unexpected field 422.
 */
@Injectable()
export class CsvUploadInterceptor implements NestInterceptor {
  private readonly upload: ReturnType<ReturnType<typeof multer>['single']>;
  private readonly tooLarge: CatalogueError;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.upload = multer({
      storage: multer.memoryStorage(),
      limits: { fileSize: config.importMaxBytes, files: 1, fields: 20 },
    }).single('file');
    this.tooLarge = ERRORS.fileOverLimit(formatBytes(config.importMaxBytes));
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    await new Promise<void>((resolve, reject) => {
      this.upload(request, http.getResponse<Response>(), (error: unknown) => {
        if (!error) return resolve();
        if (error instanceof multer.MulterError) {
          if (error.code === 'LIMIT_FILE_SIZE') return reject(new DomainError(this.tooLarge));
          return reject(RequestValidationException.field(error.field ?? 'file', error.message));
        }
        reject(RequestValidationException.field('file', 'unreadable multipart body'));
      });
    });
    if (!request.file)
      throw RequestValidationException.field('file', 'a CSV file is required (multipart field "file")');
    return next.handle();
  }
}
