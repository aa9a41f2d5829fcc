export const TRACKER_STATES = ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'] as const;
export type TrackerStatus = (typeof TRACKER_STATES)[number];
