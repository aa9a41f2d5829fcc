import { ArrivalEstimateResponse } from '../../arrival-estimates/dto/arrival-estimate.response.js';
import { ApiProperty } from '@nestjs/swagger';
import { isoUtc } from '../../common/http/timestamps.js';
import type { StatusEntryRow, TrackerDetailRow, TrackerRow } from '../trackers.rows.js';
import { toLocationPoint, type LocationPoint } from '../../location-reports/location-point.js';
import {
  STATUS_ENTRY_SOURCES,
  TRACKER_STATES,
  type StatusEntrySource,
  type TrackerStatus,
} from '../../tracker-states/tracker-status.js';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';

/** LocationPoint (OpenAPI schema; the mapper lives in src/locations). */
export class TrackerLocationPoint implements LocationPoint {
  @ApiProperty({ description: 'Bucket start (UTC)', example: '2026-11-21T10:00:00.000Z' }) timestamp: string;
  @ApiProperty() latitude: number;
  @ApiProperty() longitude: number;
  @ApiProperty(COUNT_SCHEMA) confidence: number;
  @ApiProperty({ description: "The report's own time" }) reported_at: string;
  @ApiProperty({ enum: ['hourly', 'daily'] }) granularity: 'hourly' | 'daily';
}

export class TrackerResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
  @ApiProperty(ID_SCHEMA) production_run_id: number;
  @ApiProperty({ enum: TRACKER_STATES }) status: TrackerStatus;
  @ApiProperty({ ...ID_SCHEMA, nullable: true, description: 'Set only while IN_STORAGE' }) storage_location_id:
    number | null;
  @ApiProperty({ ...ID_SCHEMA, nullable: true, description: 'Destination' }) delivery_location_id: number | null;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The identity its device reports under; null when unset' })
  device_id: string | null;
  @ApiProperty() created_at: string;
  @ApiProperty() updated_at: string;
  @ApiProperty({ type: TrackerLocationPoint, nullable: true }) latest_location: LocationPoint | null;
}

export class StatusEntryResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty(ID_SCHEMA) tracker_id: number;
  @ApiProperty({ enum: TRACKER_STATES }) status: TrackerStatus;
  @ApiProperty() timestamp: string;
  @ApiProperty({ ...ID_SCHEMA, nullable: true }) storage_location_id: number | null;
  @ApiProperty({ ...ID_SCHEMA, nullable: true }) delivery_location_id: number | null;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ ...ID_SCHEMA, nullable: true, description: 'User who added the entry' }) created_by: number | null;
  @ApiProperty({ enum: STATUS_ENTRY_SOURCES, description: 'manual (API), import (CSV import) or geofence (automatic)' })
  source: StatusEntrySource;
  @ApiProperty() created_at: string;
}

export class TrackerProductionRunSummary {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() description: string;
  @ApiProperty(ID_SCHEMA) brand_id: number;
  @ApiProperty(ID_SCHEMA) client_id: number;
}

export class TrackerLocationSummary {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
}

export class TrackerDetailResponse extends TrackerResponse {
  @ApiProperty({ type: TrackerProductionRunSummary }) production_run: TrackerProductionRunSummary;
  @ApiProperty({ type: TrackerLocationSummary, nullable: true }) storage_location: TrackerLocationSummary | null;
  @ApiProperty({ type: TrackerLocationSummary, nullable: true }) delivery_location: TrackerLocationSummary | null;
  @ApiProperty({ type: [StatusEntryResponse], description: 'Ascending by (timestamp, id)' })
  status_history: StatusEntryResponse[];
  @ApiProperty({
    type: [TrackerLocationPoint],
    description: 'Newest 100 points of the combined location history, newest first',
  })
  location_history: LocationPoint[];
  @ApiProperty({
    type: ArrivalEstimateResponse,
    nullable: true,
    description:
      "Arrival estimate from the client's own delivered journeys (in transit or in storage with a destination; may be up to 60 s old); null when there is none",
  })
  eta: ArrivalEstimateResponse | null;
}

export class StatusCountsResponse {
  @ApiProperty(COUNT_SCHEMA) CREATED: number;
  @ApiProperty(COUNT_SCHEMA) IN_TRANSIT: number;
  @ApiProperty(COUNT_SCHEMA) IN_STORAGE: number;
  @ApiProperty(COUNT_SCHEMA) DELIVERED: number;
  @ApiProperty(COUNT_SCHEMA) total: number;
}

export class ImportRowError {
  @ApiProperty({ ...COUNT_SCHEMA, description: '1-based line number in the file (header = 1)' }) row: number;
  @ApiProperty() field: string;
  @ApiProperty() message: string;
}

export class ImportDuplicate {
  @ApiProperty(COUNT_SCHEMA) row: number;
  @ApiProperty() name: string;
  @ApiProperty(ID_SCHEMA) production_run_id: number;
}

export class ImportResultResponse {
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Trackers created (or, with dry_run, that would be created)' })
  imported: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Duplicate rows skipped (skip_duplicates=true)' }) skipped: number;
  @ApiProperty({ type: [ImportDuplicate] }) duplicates: ImportDuplicate[];
  @ApiProperty({ type: [ImportRowError], description: 'Always empty on success' }) errors: ImportRowError[];
}

export class ImportFailureResponse {
  @ApiProperty({ example: 'Import failed: 2 errors' }) detail: string;
  @ApiProperty({ type: [ImportRowError] }) errors: ImportRowError[];
  @ApiProperty({ ...COUNT_SCHEMA, example: 0 }) imported: number;
}

export function toTrackerResponse(row: TrackerRow, latestLocation: LocationPoint | null = null): TrackerResponse {
  return {
    id: Number(row.id),
    name: row.name,
    production_run_id: Number(row.production_run_id),
    status: row.status,
    storage_location_id: row.storage_location_id === null ? null : Number(row.storage_location_id),
    delivery_location_id: row.delivery_location_id === null ? null : Number(row.delivery_location_id),
    notes: row.notes,
    device_id: row.device_id,
    created_at: isoUtc(row.created_at) as string,
    updated_at: isoUtc(row.updated_at) as string,
    latest_location: latestLocation,
  };
}

export function toStatusEntryResponse(row: StatusEntryRow): StatusEntryResponse {
  return {
    id: Number(row.id),
    tracker_id: Number(row.tracker_id),
    status: row.status,
    timestamp: isoUtc(row.timestamp) as string,
    storage_location_id: row.storage_location_id === null ? null : Number(row.storage_location_id),
    delivery_location_id: row.delivery_location_id === null ? null : Number(row.delivery_location_id),
    notes: row.notes,
    created_by: row.created_by === null ? null : Number(row.created_by),
    source: row.source,
    created_at: isoUtc(row.created_at) as string,
  };
}

export function toTrackerDetailResponse(row: TrackerDetailRow): TrackerDetailResponse {
  const latest = row.latest_location ? toLocationPoint(row.latest_location) : null;
  return {
    ...toTrackerResponse(row, latest),
    production_run: {
      id: Number(row.production_run_id),
      description: row.run_description,
      brand_id: Number(row.run_brand_id),
      client_id: Number(row.run_client_id),
    },
    storage_location:
      row.storage_location_id !== null && row.storage_location_name !== null
        ? { id: Number(row.storage_location_id), name: row.storage_location_name }
        : null,
    delivery_location:
      row.delivery_location_id !== null && row.delivery_location_name !== null
        ? { id: Number(row.delivery_location_id), name: row.delivery_location_name }
        : null,
    status_history: row.status_history.map(toStatusEntryResponse),
    location_history: row.location_history.map(toLocationPoint),
    eta: null,
  };
}
