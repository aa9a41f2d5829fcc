import { raw, sql, type Sql } from './db.js';

/**
 * PostgreSQL array parameters for `unnest(...)`, bound as array literals. node-postgres escapes every
 * array element through a regex; building the literal with one join is several times cheaper,
 * which matters for statements with tens of thousands of elements (an ingest batch, a geofence
 * pass). Numbers use JavaScript's shortest round-trip form, which float8 input reads back exactly
 * (so duplicate detection compares the same doubles); integers below 2^53 print without exponent.
 */

/** Values that need no quoting: numbers, digit strings and ISO timestamps. */
function plainArray(values: readonly (number | string)[]): string {
  return `{${values.join(',')}}`;
}

/** `{…}` with NULL for null and `element(value)` for every other value. */
function nullableArray<T>(values: readonly (T | null)[], element: (value: T) => string): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const value = values[i];
    out += value === null ? 'NULL' : element(value);
  }
  return `${out}}`;
}

export const nullableNumberArray = (values: readonly (number | string | null)[]): string =>
  nullableArray(values, String);

export const nullableTextArray = (values: readonly (string | null)[]): string =>
  nullableArray(values, (value) => `"${value.replace(/[\\"]/g, '\\$&')}"`);

/** Element types of the array parameters bound this way. */
type ArrayElementType = 'int' | 'bigint' | 'float8' | 'timestamptz' | 'text' | 'boolean';

/** An array literal as one bound parameter with its explicit cast: `$n::type[]`. */
function arrayParam(literal: string, type: ArrayElementType): Sql {
  return sql`${literal}::${raw(type)}[]`;
}

export const intArray = (values: readonly number[]): Sql => arrayParam(plainArray(values), 'int');
export const nullableIntArray = (values: readonly (number | null)[]): Sql =>
  arrayParam(nullableNumberArray(values), 'int');
/** Integers as numbers (exact below 2^53) or digit strings. */
export const bigintArray = (values: readonly (number | string)[]): Sql => arrayParam(plainArray(values), 'bigint');
export const nullableBigintArray = (values: readonly (number | string | null)[]): Sql =>
  arrayParam(nullableNumberArray(values), 'bigint');
export const float8Array = (values: readonly number[]): Sql => arrayParam(plainArray(values), 'float8');
export const nullableFloat8Array = (values: readonly (number | null)[]): Sql =>
  arrayParam(nullableNumberArray(values), 'float8');
export const booleanArray = (values: readonly boolean[]): Sql =>
  arrayParam(`{${values.map((v) => (v ? 't' : 'f')).join(',')}}`, 'boolean');
/** ISO timestamps (they need no quoting). */
export const timestamptzArray = (values: readonly string[]): Sql => arrayParam(plainArray(values), 'timestamptz');
export const nullableTextArrayParam = (values: readonly (string | null)[]): Sql =>
  arrayParam(nullableTextArray(values), 'text');
