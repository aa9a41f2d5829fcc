/** Wire formats of contract §0. */
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
