/**
 * The location aggregation rules of interface.md / contract §5, in one place for both sides:
 * the SQL expression the database evaluates at insert (and on rebuild) and the TypeScript
 * predicate used by tests and tools. Both read the same constants.
 */

/** Reports below this confidence are stored but never aggregated (rule 1). */
export const MIN_AGGREGATED_CONFIDENCE = 2;

/** Manufacturing-region bounding box, inclusive on all four edges (rule 2). */
export const MANUFACTURING_REGION = { minLongitude: 73.6, maxLongitude: 134.8, minLatitude: 18.2, maxLatitude: 53.5 } as const;

export type FilterReason = 'low_confidence' | 'manufacturing_region';

export function inManufacturingRegion(latitude: number, longitude: number): boolean {
  const box = MANUFACTURING_REGION;
  return longitude >= box.minLongitude && longitude <= box.maxLongitude && latitude >= box.minLatitude && latitude <= box.maxLatitude;
}

/** Why a report is not aggregated, or null when it is eligible. Low confidence wins when both apply. */
export function filterReason(report: { latitude: number; longitude: number; confidence: number }): FilterReason | null {
  if (report.confidence < MIN_AGGREGATED_CONFIDENCE) return 'low_confidence';
  if (inManufacturingRegion(report.latitude, report.longitude)) return 'manufacturing_region';
  return null;
}

export function isEligible(report: { latitude: number; longitude: number; confidence: number }): boolean {
  return filterReason(report) === null;
}

/** SQL for "inside the manufacturing region" over the given column expressions (float8 comparisons). */
export function inManufacturingRegionSql(latitude: string, longitude: string): string {
  const box = MANUFACTURING_REGION;
  return `(${longitude} BETWEEN ${box.minLongitude}::float8 AND ${box.maxLongitude}::float8
           AND ${latitude} BETWEEN ${box.minLatitude}::float8 AND ${box.maxLatitude}::float8)`;
}

/** SQL for the eligibility verdict stored in location_reports.eligible. */
export function eligibleSql(latitude: string, longitude: string, confidence: string): string {
  return `(${confidence} >= ${MIN_AGGREGATED_CONFIDENCE} AND NOT ${inManufacturingRegionSql(latitude, longitude)})`;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** UTC bucket starts (epoch ms), the TypeScript twin of date_trunc('hour'|'day', ts, 'UTC'). */
export function hourBucket(epochMs: number): number {
  return Math.floor(epochMs / HOUR_MS) * HOUR_MS;
}

export function dayBucket(epochMs: number): number {
  return Math.floor(epochMs / DAY_MS) * DAY_MS;
}
