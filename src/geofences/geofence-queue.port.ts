import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { Db, sql } from '../infrastructure/database/db.js';
import { bigintArray, intArray } from '../infrastructure/database/pg-arrays.js';
import { GeofenceInbox } from './geofence-inbox.js';

export { CARRIED_REPORT_FIELDS } from './geofence-inbox.js';

/** A (tracker, timestamp) a write stored something at: the tracker's replay must restart from there. */
export interface Mark {
  trackerId: number;
  /** Epoch microseconds. */
  fromUs: number;
}

/**
 * The geofence stage as writers see it (location ingest, manual status entries); the only file of
 * geofences they import. A write marks the trackers it touched, in its own transaction, as the
 * LAST statement before its commit: ONE queue row naming each tracker once with its earliest
 * timestamp. The queue is append-only (the mark never waits for a row another writer or the
 * worker holds), the mark commits with the write or not at all (a replay that sees it also sees
 * what it marks), and its `marked_at` is the moment it was written — right before the commit, so
 * the processing lag counts from there, not from the middle of the write. An ingest batch then
 * hands the pass its own new eligible reports (`carry`), so the pass need not read them back.
 */
@Injectable()
export class GeofenceQueue {
  constructor(
    private readonly db: Db,
    private readonly inbox: GeofenceInbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Whether automation runs (GEOFENCE_ENABLED): when off, nothing is marked or carried. */
  get enabled(): boolean {
    return this.config.geofenceEnabled;
  }

  /** Marks trackers for a replay; answers the queue row's id (null: nothing to mark, or automation off). */
  async mark(marks: Iterable<Mark>): Promise<string | null> {
    if (!this.enabled) return null;
    const earliest = new Map<number, number>();
    for (const { trackerId, fromUs } of marks) {
      const known = earliest.get(trackerId);
      if (known === undefined || fromUs < known) earliest.set(trackerId, fromUs);
    }
    if (earliest.size === 0) return null;
    const row = await this.db.one<{ id: string }>(
      sql`INSERT INTO geofence_pending (trackers, froms)
          SELECT array_agg(m.t ORDER BY m.ord), array_agg(timestamptz 'epoch' + m.us * interval '1 microsecond' ORDER BY m.ord)
            FROM unnest(${intArray([...earliest.keys()])}, ${bigintArray([...earliest.values()])}) WITH ORDINALITY AS m(t, us, ord)
          RETURNING id::text AS id`,
    );
    return row.id;
  }

  /**
   * Hands the pass that takes queue row `rowId` the reports its write stored (CARRIED_REPORT_FIELDS
   * rows, as the write statement returned them). `whole`: false when the write skipped reports
   * already stored; such a batch hands over nothing and its pass reads its reports back.
   */
  carry(rowId: string, reports: Float64Array, whole: boolean): boolean {
    return this.inbox.carry(rowId, reports, whole);
  }
}
