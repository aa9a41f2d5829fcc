import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, sql } from '../infrastructure/database/db.js';
import type { StatusEntrySource } from '../tracker-states/tracker-status.js';
import type { NewStatusEntry } from './tracker-status.repository.js';
import type { NewTracker } from './trackers.repository.js';
import { INSERT_CHUNK } from './trackers.rows.js';

/** Key of a (run, name) pair in the sets of existingPairs. */
export function pairKey(productionRunId: number, name: string): string {
  return `${productionRunId}\u0000${name}`;
}

/** Loads of at least this many rows have the status-entry trigger planned again before each chunk. */
const REPLAN_FROM_ROWS = 1000;

/**
 * Set-based SQL over many trackers at once (CSV import, demo data): UNNEST arrays, one statement
 * per INSERT_CHUNK rows, which keeps each parameter array (and the time spent serializing it on
 * the event loop) moderate. Scoped like TrackersRepository.
 */
@Injectable()
export class TrackerBulkRepository {
  constructor(private readonly db: Db) {}

  /**
   * The status-entry trigger keeps tracker_journey_facts; its statements are planned once per
   * connection and kept until the table's statistics change. Planned while the table was small (a
   * fresh database, a connection that wrote entries early), they join each new chunk's trackers to
   * the whole table per tracker — quadratic: 13 s for a 10 000-row chunk once 10 000 trackers
   * existed. Before each chunk of a large load this connection drops its cached plans: planned
   * again, they see the table's current size (the planner scales the last statistics to the pages
   * the table has now). DISCARD PLANS takes no lock (an ANALYZE would hold its table lock until the
   * load commits, and two concurrent loads could deadlock on it).
   */
  private async replanStatusTrigger(rows: number): Promise<void> {
    if (rows >= REPLAN_FROM_ROWS) await this.db.execute(sql`DISCARD PLANS`);
  }

  /** (run, name) pairs among `pairs` that are already stored (CSV duplicate check), keyed by pairKey. */
  async existingPairs(scope: AccessScope, pairs: { productionRunId: number; name: string }[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < pairs.length; start += INSERT_CHUNK) {
      const chunk = pairs.slice(start, start + INSERT_CHUNK);
      const rows = await this.db.rows<{ production_run_id: number; name: string }>(
        sql`SELECT t.production_run_id, t.name
              FROM unnest(${chunk.map((p) => p.productionRunId)}::int[], ${chunk.map((p) => p.name)}::text[]) AS u(production_run_id, name)
              JOIN trackers t ON t.production_run_id = u.production_run_id AND t.name = u.name
              JOIN production_runs pr ON pr.id = t.production_run_id
             WHERE ${scope.visibleClient('pr.client_id')}`,
      );
      for (const row of rows) found.add(pairKey(Number(row.production_run_id), row.name));
    }
    return found;
  }

  /**
   * Inserts trackers with their first status entry, ids in input order. The first entry is
   * stamped with the tracker's created_at (now, unless back-dated by demo data). Rows whose run is
   * not visible are not inserted. Returns how many were inserted.
   */
  /** Which of `deviceIds` some tracker already has (of any client: device ids are unique among all trackers). */
  async existingDeviceIds(deviceIds: string[]): Promise<Set<string>> {
    if (deviceIds.length === 0) return new Set();
    const rows = await this.db.rows<{ device_id: string }>(
      sql`SELECT device_id FROM trackers WHERE device_id = ANY(${deviceIds}::text[])`,
    );
    return new Set(rows.map((r) => r.device_id));
  }

  async insertMany(
    scope: AccessScope,
    trackers: NewTracker[],
    createdBy: number | null,
    source: StatusEntrySource,
  ): Promise<number> {
    let inserted = 0;
    for (let start = 0; start < trackers.length; start += INSERT_CHUNK) {
      await this.replanStatusTrigger(trackers.length);
      const chunk = trackers.slice(start, start + INSERT_CHUNK);
      const column = <T>(pick: (t: NewTracker) => T) => chunk.map(pick);
      // The history insert reads only `created`'s RETURNING rows: no join back to the input, whose
      // row estimate (unnest) would make the planner pick a nested loop.
      const { n } = await this.db.one<{ n: number }>(
        sql`WITH created AS (
              INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, notes, device_id,
                                    created_at, updated_at)
              SELECT u.name, u.production_run_id, u.status, u.storage_location_id, u.delivery_location_id, u.notes, u.device_id,
                     COALESCE(u.created_at, now()), COALESCE(u.created_at, now())
                FROM unnest(${column((t) => t.name)}::text[], ${column((t) => t.productionRunId)}::int[], ${column((t) => t.status)}::text[],
                            ${column((t) => (t.status === 'IN_STORAGE' ? t.storageLocationId : null))}::int[],
                            ${column((t) => t.deliveryLocationId)}::int[], ${column((t) => t.notes)}::text[],
                            ${column((t) => t.deviceId ?? null)}::text[],
                            ${column((t) => t.createdAt?.toISOString() ?? null)}::timestamptz[]) WITH ORDINALITY
                     AS u(name, production_run_id, status, storage_location_id, delivery_location_id, notes, device_id, created_at, ord)
               WHERE ${scope.visibleRun('u.production_run_id')}
               ORDER BY u.ord
              RETURNING id, status, storage_location_id, delivery_location_id, created_at
            ), entries AS (
              -- The first status entry; a DELIVERED tracker was delivered at its destination.
              INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, created_by, source)
              SELECT c.id, c.status, c.created_at, c.storage_location_id,
                     CASE WHEN c.status = 'DELIVERED' THEN c.delivery_location_id END, ${createdBy}::int, ${source}::text
                FROM created c
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM entries`,
      );
      inserted += n;
    }
    return inserted;
  }

  /** Extra status entries for many trackers at once (demo data); follow with syncStatusFromHistory. */
  async insertStatusEntries(scope: AccessScope, entries: (NewStatusEntry & { trackerId: number })[]): Promise<void> {
    for (let start = 0; start < entries.length; start += INSERT_CHUNK) {
      await this.replanStatusTrigger(entries.length);
      const chunk = entries.slice(start, start + INSERT_CHUNK);
      const column = <T>(pick: (e: NewStatusEntry & { trackerId: number }) => T) => chunk.map(pick);
      await this.db.execute(
        sql`INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by)
            SELECT u.* FROM unnest(${column((e) => e.trackerId)}::int[], ${column((e) => e.status)}::text[],
                                   ${column((e) => e.timestamp.toISOString())}::timestamptz[], ${column((e) => e.storageLocationId)}::int[],
                                   ${column((e) => e.deliveryLocationId)}::int[], ${column((e) => e.notes)}::text[],
                                   ${column((e) => e.createdBy)}::int[])
                        AS u(tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by)
             WHERE ${scope.visibleTracker('u.tracker_id')}`,
      );
    }
  }

  /**
   * Moves each tracker to its latest (timestamp, id) entry (TrackerStatusRepository.followLatestEntry's rule), set-based.
   * Part of creating trackers with a history (demo data), so it records no status-change events;
   * call it inside the creating transaction (the setting lasts until its end).
   */
  async syncStatusFromHistory(scope: AccessScope, trackerIds: number[]): Promise<void> {
    await this.db.execute(sql`SELECT set_config('tracker_pipeline.status_events', 'off', true)`);
    await this.db.execute(
      sql`SELECT trackers_follow_latest_entry(ARRAY(SELECT u.id FROM unnest(${trackerIds}::int[]) AS u(id) WHERE ${scope.visibleTracker('u.id')}))`,
    );
  }
}
