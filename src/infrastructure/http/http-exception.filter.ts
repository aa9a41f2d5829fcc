import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import {
  isDatabaseUnavailable,
  isForeignKeyViolation,
  isStatementTimeout,
  isUniqueViolation,
  isUnstorableText,
} from '../database/sql-state.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ERRORS, errorExampleBody, type CatalogueError } from '../../common/errors/error-catalogue.js';
import { describeRequestError } from '../../common/errors/request-errors.js';
import { redactUrl } from '../logging/redact-url.js';

/**
 * The one exception filter: every error leaves as `{"detail": string}` (plus `errors` for 422).
 * A DomainError answers its catalogue entry (status, body, the occurrence's headers such as the
 * login throttle's Retry-After); request-reading failures, database errors and Nest's own
 * exceptions (validation, unmatched routes) are mapped to catalogue entries here too.
 * Unknown errors become a bare 500 and are logged with the request id — never a stack, SQL or path
 * in a response.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request & { id?: string }>();
    if (response.headersSent) {
      // A streamed response failed midway: the status is gone, so end the stream.
      this.logger.error({ err: exception, reqId: request.id }, 'error after response started');
      response.destroy();
      return;
    }
    const { status, body, headers } = this.describe(exception);
    if (status >= 500) {
      this.logger.error(
        { err: exception, reqId: request.id, path: redactUrl(request.path) },
        `request failed with ${status}`,
      );
    }
    for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
    response.status(status).json(body);
  }

  private describe(exception: unknown): {
    status: number;
    body: Record<string, unknown>;
    headers?: Record<string, string>;
  } {
    // Unreadable bodies, multipart forms and paths: 422 like any validation failure (or 413/415).
    const requestError = describeRequestError(exception);
    if (requestError) return requestError;
    if (exception instanceof DomainError) {
      const status = exception.getStatus();
      return { status, body: exception.getResponse(), headers: { ...challenge(status), ...exception.headers } };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const payload = exception.getResponse();
      const headers = challenge(status);
      if (
        typeof payload === 'object' &&
        payload !== null &&
        typeof (payload as { detail?: unknown }).detail === 'string'
      ) {
        return { status, body: payload as Record<string, unknown>, headers };
      }
      return { status, body: { detail: defaultDetail(status, payload) }, headers };
    }
    if (exception instanceof QueryFailedError) {
      if (isUniqueViolation(exception)) return answer(ERRORS.alreadyExists);
      if (isForeignKeyViolation(exception)) return answer(ERRORS.stillReferenced);
      if (isStatementTimeout(exception)) return answer(ERRORS.unavailable);
      // The request text rule rejects such text first; this is the backstop for any path that reaches the database without it.
      if (isUnstorableText(exception)) return answer(ERRORS.unstorableText);
    }
    if (isDatabaseUnavailable(exception)) return { ...answer(ERRORS.unavailable), headers: { 'Retry-After': '1' } };
    return answer(ERRORS.internal);
  }
}

/** A catalogue error's answer (422 entries carry their one field error). */
function answer(error: CatalogueError): { status: number; body: Record<string, unknown> } {
  return { status: error.status, body: errorExampleBody(error) };
}

/** A 401 names the scheme that would succeed. */
function challenge(status: number): Record<string, string> | undefined {
  return status === HttpStatus.UNAUTHORIZED ? { 'WWW-Authenticate': 'Bearer' } : undefined;
}

function defaultDetail(status: number, payload: unknown): string {
  if (typeof payload === 'string') return payload;
  const message = (payload as { message?: unknown })?.message;
  if (
    status === 404 &&
    (message === undefined || /^Cannot (GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /.test(String(message)))
  ) {
    return ERRORS.notFound.detail;
  }
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return HttpStatus[status]?.toString() ?? 'Error';
}
