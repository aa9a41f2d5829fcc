import { isoUtcSql } from '../common/http/timestamps.js';
import { raw, sql, type Sql } from '../infrastructure/database/db.js';

/** LocationPoint of the API: one aggregated bucket (or the latest eligible report). */
export interface LocationPoint {
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
  reported_at: string;
  granularity: 'hourly' | 'daily';
}

/** A point as SQL selects it (`locationPointColumns`): timestamps already in the wire format. */
export interface LocationPointRow {
  bucket: string;
  latitude: number;
  longitude: number;
  confidence: number;
  reported_at: string;
  granularity: 'hourly' | 'daily';
}

/**
 * SQL select list of a LocationPointRow from a relation aliased `alias` with bucket, latitude,
 * longitude, confidence and reported_at columns; `granularity` is an SQL expression.
 */
export function locationPointColumns(alias: string, granularity = `${alias}.granularity`): Sql {
  return raw(`${isoUtcSql(`${alias}.bucket`)} AS bucket, ${alias}.latitude, ${alias}.longitude, ${alias}.confidence,
          ${isoUtcSql(`${alias}.reported_at`)} AS reported_at, ${granularity} AS granularity`);
}

export function toLocationPoint(row: LocationPointRow): LocationPoint {
  return {
    timestamp: row.bucket,
    latitude: Number(row.latitude),
    longitude: Number(row.longitude),
    confidence: Number(row.confidence),
    reported_at: row.reported_at,
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
export function latestLocationLateral(trackerIdColumn: string): Sql {
  return sql`SELECT ${locationPointColumns('h', `'hourly'::text`)}
            FROM location_history_hourly h
           WHERE h.tracker_id = ${raw(trackerIdColumn)}
           ORDER BY h.bucket DESC LIMIT 1`;
}
