import type { CatalogueError } from './catalogue-error.js';

/**
 * An error of the service's own rules, carrying its catalogue entry: services, guards and
 * interceptors throw it (`throw new DomainError(ERRORS.trackerNotFound)` or `fail(...)`) and the
 * one exception filter answers it with the entry's status and body plus `headers`.
 */
export class DomainError extends Error {
  constructor(
    readonly error: CatalogueError,
    /** What this occurrence adds: response headers (Retry-After) and body fields (an import's row errors). */
    readonly extras: DomainErrorExtras = {},
  ) {
    super(error.detail);
    this.name = 'DomainError';
  }

  getStatus(): number {
    return this.error.status;
  }

  /** The response body: `{"detail": …}` plus the entry's extra fields. */
  getResponse(): Record<string, unknown> {
    return { detail: this.error.detail, ...this.error.body, ...this.extras.body };
  }

  get headers(): Readonly<Record<string, string>> {
    return this.extras.headers ?? {};
  }
}

interface DomainErrorExtras {
  headers?: Readonly<Record<string, string>>;
  body?: Readonly<Record<string, unknown>>;
}

export function fail(error: CatalogueError, extras?: DomainErrorExtras): never {
  throw new DomainError(error, extras);
}

/** The value, or the error when there is none: `found(row, ERRORS.brandNotFound)` for a missing (or invisible) row. */
export function found<T>(value: T | null | undefined, error: CatalogueError): T {
  if (value === null || value === undefined) throw new DomainError(error);
  return value;
}
