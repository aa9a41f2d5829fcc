export const TRACKER_STATES = ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'] as const;
export type TrackerStatus = (typeof TRACKER_STATES)[number];

/** Where a status entry came from: the API, the CSV import, or automation (geofences). */
export const STATUS_ENTRY_SOURCES = ['manual', 'import', 'geofence'] as const;
export type StatusEntrySource = (typeof STATUS_ENTRY_SOURCES)[number];
