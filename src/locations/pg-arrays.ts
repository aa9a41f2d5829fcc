/**
 * PostgreSQL array literals for `UNNEST($1::int[], ...)` parameters. node-postgres escapes every
 * array element through a regex; building the literal with one join is several times cheaper,
 * which matters at 10 000 reports per batch. Numbers use JavaScript's shortest round-trip form,
 * which float8 input reads back exactly (so duplicate detection compares the same doubles).
 */
export function numberArray(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}

export function nullableNumberArray(values: readonly (number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const value = values[i];
    out += value === null ? 'NULL' : String(value);
  }
  return `${out}}`;
}

/** Values that need no quoting (ISO timestamps). */
export function plainTextArray(values: readonly string[]): string {
  return `{${values.join(',')}}`;
}

export function nullableTextArray(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const value = values[i];
    out += value === null ? 'NULL' : `"${value.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}
