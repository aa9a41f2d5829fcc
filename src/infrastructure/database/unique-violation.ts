import { QueryFailedError } from 'typeorm';

/** A statement refused by a unique index (SQLSTATE 23505), optionally by this one constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pg =
    error instanceof QueryFailedError ? (error.driverError as { code?: string; constraint?: string }) : undefined;
  return pg?.code === '23505' && (constraint === undefined || pg.constraint === constraint);
}
