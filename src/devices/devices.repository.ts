import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** The trackers devices report under, found by their device ids. */
@Injectable()
export class DevicesRepository {
  constructor(private readonly db: Db) {}

  /** Tracker id of each of `deviceIds` that some tracker in scope has (absent: unknown or out of scope). */
  async trackerIds(scope: AccessScope, deviceIds: readonly string[]): Promise<Map<string, number>> {
    if (deviceIds.length === 0) return new Map();
    const rows = await this.db.rows<{ device_id: string; id: number }>(
      sql`SELECT t.device_id, t.id FROM trackers t
           WHERE t.device_id = ANY(${[...deviceIds]}::text[]) AND ${scope.visibleTracker('t.id')}`,
    );
    return new Map(rows.map((row) => [row.device_id, row.id]));
  }
}
