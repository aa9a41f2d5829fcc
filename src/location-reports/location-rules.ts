import { raw, sql, type Sql } from '../infrastructure/database/db.js';

/**
 * The location aggregation rules (docs/api.md, location reports), in one place for every side:
 * the SQL conditions the database evaluates at insert, on rebuild and in the pipeline health
 * check, and the TypeScript predicate used by tests and tools. All read the same constants, which
 * go into the SQL as literal text (not parameters), so the statements keep one plan.
 */

/** Reports below this confidence are stored but never aggregated (rule 1). */
export const MIN_AGGREGATED_CONFIDENCE = 2;

/** Manufacturing-region bounding box, inclusive on all four edges (rule 2). */
export const MANUFACTURING_REGION = {
  minLongitude: 73.6,
  maxLongitude: 134.8,
  minLatitude: 18.2,
  maxLatitude: 53.5,
} as const;

export type FilterReason = 'low_confidence' | 'manufacturing_region';

export function inManufacturingRegion(latitude: number, longitude: number): boolean {
  const box = MANUFACTURING_REGION;
  return (
    longitude >= box.minLongitude &&
    longitude <= box.maxLongitude &&
    latitude >= box.minLatitude &&
    latitude <= box.maxLatitude
  );
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
export function inManufacturingRegionSql(latitude: string, longitude: string): Sql {
  const box = MANUFACTURING_REGION;
  return raw(`(${longitude} BETWEEN ${box.minLongitude}::float8 AND ${box.maxLongitude}::float8
           AND ${latitude} BETWEEN ${box.minLatitude}::float8 AND ${box.maxLatitude}::float8)`);
}

/** SQL for "below the aggregation confidence" over the given column expression. */
export function belowMinConfidenceSql(confidence: string): Sql {
  return raw(`(${confidence} < ${MIN_AGGREGATED_CONFIDENCE})`);
}

/** SQL for the eligibility verdict stored in location_reports.eligible. */
export function eligibleSql(latitude: string, longitude: string, confidence: string): Sql {
  return sql`(${raw(`${confidence} >= ${MIN_AGGREGATED_CONFIDENCE}`)} AND NOT ${inManufacturingRegionSql(latitude, longitude)})`;
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
