import type { ArgumentsHost } from '@nestjs/common';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LoginThrottledException } from '../../src/auth/login-throttle.service.js';
import { DomainError } from '../../src/common/errors/domain-error.js';
import { ERROR_CATALOGUE, ERROR_GROUPS } from '../../src/app.errors.js';
import type { CatalogueError } from '../../src/common/errors/error-catalogue.js';
import { HttpExceptionFilter } from '../../src/infrastructure/http/http-exception.filter.js';

/** Every catalogue entry, builders called without arguments (their documented example). */
function entries(): [string, CatalogueError][] {
  return Object.entries(ERROR_CATALOGUE).map(([name, value]) => [
    name,
    typeof value === 'function' ? (value as () => CatalogueError)() : value,
  ]);
}

/** What the filter answers for an exception: status, headers and JSON body. */
function answer(exception: unknown): { status: number; headers: Record<string, string>; body: unknown } {
  const result = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown };
  const response = {
    headersSent: false,
    setHeader: (name: string, value: string) => (result.headers[name] = value),
    status: (status: number) => ((result.status = status), response),
    json: (body: unknown) => (result.body = body),
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => ({ id: 'r1', path: '/x' }) }),
  } as unknown as ArgumentsHost;
  new HttpExceptionFilter().catch(exception, host);
  return result;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('error catalogue', () => {
  it('gives every error a stable UPPER_SNAKE code with one status', () => {
    const statusOf = new Map<string, number>();
    for (const [name, error] of entries()) {
      expect({ name, code: /^[A-Z][A-Z0-9_]+$/.test(error.code) }).toEqual({ name, code: true });
      expect({ name, status: error.status >= 400 && error.status < 600 }).toEqual({ name, status: true });
      if (statusOf.has(error.code))
        expect({ name, status: error.status }).toEqual({ name, status: statusOf.get(error.code) });
      statusOf.set(error.code, error.status);
    }
  });

  it('is assembled from groups that never declare the same entry twice', () => {
    const names = Object.values(ERROR_GROUPS).flatMap((group) => Object.keys(group));
    expect(names.length).toBe(new Set(names).size);
    expect(Object.keys(ERROR_CATALOGUE).sort()).toEqual([...names].sort());
  });

  it('builds parameterized details from their values', () => {
    expect(ERROR_CATALOGUE.trackerExists('T-1', 7).detail).toBe("Tracker 'T-1' already exists in production run 7");
    expect(ERROR_CATALOGUE.brandExists('Acme', 3).detail).toBe("Brand 'Acme' already exists for client 3");
    expect(ERROR_CATALOGUE.stillReferencedBy('Brand', 'production runs')).toMatchObject({
      status: 409,
      detail: 'Brand is still referenced by production runs',
    });
  });

  it('is the only source of error answers: no service builds a Nest HTTP exception with its own text', () => {
    const offenders = sourceFiles('src')
      .filter((path) => !path.startsWith(join('src', 'common', 'errors')))
      .filter((path) =>
        /new (NotFound|Conflict|BadRequest|Unauthorized|Forbidden|PayloadTooLarge|InternalServerError|UnprocessableEntity|ServiceUnavailable|Http)Exception\(/.test(
          readFileSync(path, 'utf8'),
        ),
      );
    expect(offenders).toEqual([]);
  });
});

describe('DomainError through the exception filter', () => {
  it('answers the entry status and detail', () => {
    expect(answer(new DomainError(ERROR_CATALOGUE.trackerNotFound))).toEqual({
      status: 404,
      headers: {},
      body: { detail: 'Tracker not found' },
    });
  });

  it('adds WWW-Authenticate: Bearer to a 401', () => {
    expect(answer(new DomainError(ERROR_CATALOGUE.invalidCredentials))).toEqual({
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer' },
      body: { detail: 'Could not validate credentials' },
    });
  });

  it('sends the login throttle 429 with Retry-After (at least 1 second)', () => {
    expect(answer(new LoginThrottledException(42))).toEqual({
      status: 429,
      headers: { 'Retry-After': '42' },
      body: { detail: 'Too many login attempts. Try again later.' },
    });
    expect(answer(new LoginThrottledException(0)).headers).toEqual({ 'Retry-After': '1' });
  });

  it('merges the entry body fields and the occurrence body fields', () => {
    expect(answer(new DomainError(ERROR_CATALOGUE.importDataChanged)).body).toEqual({
      detail: 'Import failed: the data changed during the import; nothing was imported',
      errors: [],
      imported: 0,
    });
    const rows = [{ row: 2, field: 'name', message: 'is required' }];
    expect(
      answer(new DomainError(ERROR_CATALOGUE.importRowsInvalid(1), { body: { errors: rows, imported: 0 } })),
    ).toEqual({
      status: 422,
      headers: {},
      body: { detail: 'Import failed: 1 errors', errors: rows, imported: 0 },
    });
  });
});
