import { Injectable } from '@nestjs/common';
import { AccessScope } from '../common/auth/access-scope.js';
import type { NewStatusEntry } from './tracker-status.repository.js';
import { TrackerBulkRepository } from './tracker-bulk.repository.js';
import type { NewTracker } from './trackers.repository.js';

export type { NewStatusEntry } from './tracker-status.repository.js';
export type { NewTracker } from './trackers.repository.js';

/**
 * Set-based tracker writes for seeding (demo data): as an admin, no creator, inside the caller's
 * transaction. Cache invalidation is the caller's, after its commit.
 */
@Injectable()
export class TrackerBulkService {
  private readonly scope = AccessScope.admin();

  constructor(private readonly bulk: TrackerBulkRepository) {}

  /** Trackers with their first status entry (source `manual`); returns how many were inserted. */
  insertTrackers(trackers: NewTracker[]): Promise<number> {
    return this.bulk.insertMany(this.scope, trackers, null, 'manual');
  }

  /** Status entries appended to existing trackers, then their current status moved to their latest entry. */
  async insertHistories(entries: (NewStatusEntry & { trackerId: number })[], trackerIds: number[]): Promise<void> {
    await this.bulk.insertStatusEntries(this.scope, entries);
    await this.bulk.syncStatusFromHistory(this.scope, trackerIds);
  }
}
