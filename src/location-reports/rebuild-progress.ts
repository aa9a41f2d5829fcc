/** Progress of a rebuild from the stored reports (locations:rebuild, geofences:rebuild). */
export interface RebuildProgress {
  /** Called once with the number of trackers, then after every batch with the number done. */
  start?(total: number): void;
  advance?(done: number): void;
}
