import { MAX_INT4 } from '../int4.js';

/*
 * Property schemas shared by the DTOs, so every id and count is documented the same way:
 * `@ApiProperty({ ...ID_SCHEMA, nullable: true })`. TypeScript's `number` alone would be
 * documented as `number`, and generated clients would then send fractions.
 */

/** A row id: every id column is a PostgreSQL int4 (serial), and ids start at 1. */
export const ID_SCHEMA = { type: 'integer', minimum: 1, maximum: MAX_INT4 } as const;

/** A count, size, position or other whole number that is never negative. */
export const COUNT_SCHEMA = { type: 'integer', minimum: 0 } as const;
