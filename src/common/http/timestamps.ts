/** Wire formats of timestamps (see docs/api.md, Conventions). */

/**
 * SQL: a timestamptz as the text `isoUtc` would produce (`toISOString()`: UTC, milliseconds, `Z`),
 * or NULL. Lets PostgreSQL hand over finished strings where many timestamps are read (no Date
 * parsing and re-formatting per value). Explicitly UTC: behind PgBouncer the session time zone is
 * not ours.
 */
export const isoUtcSql = (expr: string): string =>
  `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export function isoUtc(date: Date | string | null | undefined): string | null {
  if (date === null || date === undefined) return null;
  return new Date(date).toISOString();
}

/** `Image.uploaded_at`: ISO 8601 without a timezone suffix (UTC). */
export function isoNoSuffix(date: Date | string): string {
  return new Date(date).toISOString().slice(0, -1);
}

/** Health timestamps: numeric UTC offset. */
export function isoWithOffset(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '+00:00');
}
