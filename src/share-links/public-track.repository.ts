import { Injectable } from '@nestjs/common';
import { isoUtcSql } from '../common/http/timestamps.js';
import { Db, raw, sql } from '../infrastructure/database/db.js';
import { latestLocationLateral } from '../location-reports/location-point.js';

export interface PublicTrackerRow {
  name: string;
  status: string;
  delivery_location_id: number | null;
  destination_name: string | null;
  destination_latitude: number | null;
  destination_longitude: number | null;
  status_entry_id: string | null;
  latest_latitude: number | null;
  latest_longitude: number | null;
  latest_reported_at: string | null;
}

export interface PublicStatusRow {
  status: string;
  timestamp: string;
  location_name: string | null;
  latitude: number | null;
  longitude: number | null;
}

/**
 * What a share link shows of its tracker. Reached only through a valid link (the link is the
 * permission), so no caller scope applies; the statements select only the columns the public view
 * may show, plus the location coordinates its page draws.
 */
@Injectable()
export class PublicTrackRepository {
  constructor(private readonly db: Db) {}

  tracker(trackerId: number): Promise<PublicTrackerRow | null> {
    return this.db.first<PublicTrackerRow>(
      sql`SELECT t.name, t.status, t.delivery_location_id, dl.name AS destination_name,
                 dl.latitude AS destination_latitude, dl.longitude AS destination_longitude, t.status_entry_id,
                 ll.latitude AS latest_latitude, ll.longitude AS latest_longitude, ll.reported_at AS latest_reported_at
            FROM trackers t
            LEFT JOIN delivery_locations dl ON dl.id = t.delivery_location_id
            LEFT JOIN LATERAL (${latestLocationLateral('t.id')}) ll ON TRUE
           WHERE t.id = ${trackerId}`,
    );
  }

  /** The status history, ascending by (timestamp, id), with each entry's location. */
  statusHistory(trackerId: number): Promise<PublicStatusRow[]> {
    return this.db.rows<PublicStatusRow>(
      sql`SELECT h.status, ${raw(isoUtcSql('h.timestamp'))} AS timestamp, COALESCE(sl.name, dl.name) AS location_name,
                 COALESCE(sl.latitude, dl.latitude) AS latitude, COALESCE(sl.longitude, dl.longitude) AS longitude
            FROM tracker_status_history h
            LEFT JOIN storage_locations sl ON sl.id = h.storage_location_id
            LEFT JOIN delivery_locations dl ON dl.id = h.delivery_location_id
           WHERE h.tracker_id = ${trackerId}
           ORDER BY h.timestamp, h.id`,
    );
  }
}
