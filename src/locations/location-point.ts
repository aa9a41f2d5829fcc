import { isoUtc } from '../common/http/timestamps.js';

/** LocationPoint of contract §5: one aggregated bucket (or the latest eligible report). */
export interface LocationPoint {
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
  reported_at: string;
  granularity: 'hourly' | 'daily';
}

export interface LocationPointRow {
  bucket: Date;
  latitude: number;
  longitude: number;
  confidence: number;
  reported_at: Date;
  granularity: 'hourly' | 'daily';
}

export function toLocationPoint(row: LocationPointRow): LocationPoint {
  return {
    timestamp: isoUtc(row.bucket) as string,
    latitude: Number(row.latitude),
    longitude: Number(row.longitude),
    confidence: Number(row.confidence),
    reported_at: isoUtc(row.reported_at) as string,
    granularity: row.granularity,
  };
}

/**
 * SQL (LATERAL-joinable) for a tracker's latest location: the eligible report with the greatest
 * (timestamp, id). That report always wins its hourly bucket, so it is the newest hourly row —
 * one index probe on location_history_hourly's primary key (tracker_id, bucket).
 * Use as: `LEFT JOIN LATERAL (${latestLocationLateral('t.id')}) ll ON TRUE`, then select
 * `ll.bucket AS ll_bucket ...` or `to_jsonb(ll)`.
 */
export function latestLocationLateral(trackerIdColumn: string): string {
  return `SELECT h.bucket, h.latitude, h.longitude, h.confidence, h.reported_at, 'hourly'::text AS granularity
            FROM location_history_hourly h
           WHERE h.tracker_id = ${trackerIdColumn}
           ORDER BY h.bucket DESC LIMIT 1`;
}

