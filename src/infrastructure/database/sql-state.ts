import { QueryFailedError } from 'typeorm';

/**
 * What a database error means, read from its SQLSTATE (PostgreSQL's error code): the one place
 * that knows the codes. Accepts TypeORM's QueryFailedError (the code is on its driverError) and
 * pg's own errors alike.
 */

interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

/** The pg error behind a TypeORM error, or the error itself. */
function pgErrorOf(error: unknown): PgError | undefined {
  const err = error instanceof QueryFailedError ? error.driverError : error;
  return err !== null && typeof err === 'object' ? (err as PgError) : undefined;
}

/** The SQLSTATE (or the socket error code) of an error, if it has one. */
function sqlStateOf(error: unknown): string | undefined {
  const code = pgErrorOf(error)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A statement refused by a unique index (23505), optionally by this one constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pg = error instanceof QueryFailedError ? pgErrorOf(error) : undefined;
  return pg?.code === '23505' && (constraint === undefined || pg.constraint === constraint);
}

/** A statement refused by a foreign key (23503): the row is still referenced, or references nothing. */
export function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && sqlStateOf(error) === '23503';
}

/** A statement cancelled by its statement_timeout (57014, query_canceled). */
export function isStatementTimeout(error: unknown): boolean {
  return sqlStateOf(error) === '57014';
}

/** A lock not taken within lock_timeout (55P03, lock_not_available). */
export function isLockNotAvailable(error: unknown): boolean {
  return sqlStateOf(error) === '55P03';
}

/** A serialization failure (40001) or a deadlock (40P01): the transaction may be run again. */
export function isSerializationConflict(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code === '40001' || code === '40P01';
}

/**
 * Text PostgreSQL refuses to store: 22021 "invalid byte sequence" (a NUL byte in text) and 22P05
 * "untranslatable character" (\u0000 in jsonb).
 */
export function isUnstorableText(error: unknown): boolean {
  const code = error instanceof QueryFailedError ? sqlStateOf(error) : undefined;
  return code === '22021' || code === '22P05';
}

/**
 * An error in the data a statement was given, which running it again cannot change: SQLSTATE
 * class 22 (data exception: a value out of range, text that is not valid input or cannot be
 * stored, …) or 23 (integrity constraint violation). Connection loss, conflicts and timeouts are
 * none of these.
 */
export function isDataError(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** Connection-level failures that mean "the database is unreachable". */
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /Connection terminated/i,
  // pg, for a query on a client whose connection has already failed or closed.
  /is not queryable/i,
  /ECONNREFUSED/,
  /ECONNRESET/,
  /connect ETIMEDOUT/,
];
const UNAVAILABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
]);

/** The database is unreachable: the server shut down or refused the connection, or the socket failed. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const err = pgErrorOf(error);
  if (!err) return false;
  if (err.code && UNAVAILABLE_CODES.has(err.code)) return true;
  return typeof err.message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(err.message as string));
}
