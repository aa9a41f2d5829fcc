import type { LocationPointRow } from '../location-reports/location-point.js';
import { raw } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';
import type { StatusEntrySource, TrackerStatus } from '../tracker-states/tracker-status.js';

/**
 * A `trackers` row as the repositories return it (timestamps as Date, or as wire text when SQL
 * formats them). status_entry_id/at are the status-event trigger's bookkeeping, never selected.
 */
export type TrackerRow = Omit<
  Tables['trackers'],
  'status' | 'created_at' | 'updated_at' | 'status_entry_id' | 'status_entry_at'
> & {
  status: TrackerStatus;
  created_at: Date | string;
  updated_at: Date | string;
};

/** A `tracker_status_history` row (bigint ids arrive as strings from pg). */
export type StatusEntryRow = Omit<
  Tables['tracker_status_history'],
  'id' | 'status' | 'timestamp' | 'created_at' | 'source'
> & {
  id: string | number;
  status: TrackerStatus;
  source: StatusEntrySource;
  timestamp: Date | string;
  created_at: Date | string;
};

/** Detail row: the tracker plus JSON aggregates built by one query (see TrackersRepository.findDetail). */
export interface TrackerDetailRow extends TrackerRow {
  run_description: string;
  run_brand_id: number;
  run_client_id: number;
  storage_location_name: string | null;
  delivery_location_name: string | null;
  latest_location: LocationPointRow | null;
  status_history: StatusEntryRow[];
  location_history: LocationPointRow[];
}

/** Select list of a TrackerRow from `trackers t`. */
export const TRACKER_COLUMNS = raw(
  't.id, t.name, t.production_run_id, t.status, t.storage_location_id, t.delivery_location_id, t.notes, t.device_id, t.created_at, t.updated_at',
);

/** Select list of a StatusEntryRow from `tracker_status_history` (unaliased). */
export const ENTRY_COLUMNS = raw(
  'id, tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by, source, created_at',
);

/** Bulk statements go in chunks so one statement's parameter arrays stay moderate. */
export const INSERT_CHUNK = 10_000;
