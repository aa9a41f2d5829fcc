import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, and, empty, join, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import {
  latestLocationLateral,
  locationPointColumns,
  toLocationPoint,
  type LocationPoint,
  type LocationPointRow,
} from '../location-reports/location-point.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';
import type { SortOrder, TrackerSortField } from './dto/list-trackers.query.js';
import { TRACKER_COLUMNS, type TrackerDetailRow, type TrackerRow } from './trackers.rows.js';

export interface TrackerFilter {
  ids?: number[];
  productionRunId?: number;
  statuses?: TrackerStatus[];
  /** Case-insensitive substring. */
  name?: string;
  storageLocationId?: number;
  deliveryLocationId?: number;
}

export interface TrackerPageRequest {
  sortBy: TrackerSortField;
  sortOrder: SortOrder;
  skip: number;
  limit: number;
}

export interface NewTracker {
  name: string;
  productionRunId: number;
  status: TrackerStatus;
  storageLocationId: number | null;
  deliveryLocationId: number | null;
  notes: string | null;
  /** The device's identity (unique among trackers); absent or null: none. */
  deviceId?: string | null;
  /** Time of the first status entry (default: now); single inserts only — insertMany uses createdAt. */
  statusTimestamp?: Date | null;
  /** Row creation time (default: now), also the first entry's time in insertMany; demo data back-dates it. */
  createdAt?: Date | null;
}

export interface TrackerChanges {
  name?: string;
  productionRunId?: number;
  deliveryLocationId?: number | null;
  notes?: string | null;
  deviceId?: string | null;
}

/** Sort keys of the list, whitelisted: only these ever reach ORDER BY. */
const SORT_COLUMNS: Record<TrackerSortField, string> = {
  id: 't.id',
  name: 't.name',
  status: 't.status',
  created_at: 't.created_at',
  updated_at: 't.updated_at',
};
/** How many location-history points the detail view carries (see docs/api.md). */
const DETAIL_HISTORY_POINTS = 100;

const TRACKERS_OF_RUNS = raw('trackers t JOIN production_runs pr ON pr.id = t.production_run_id');

/**
 * SQL for single trackers and tracker lists. Every method takes the caller's scope first and
 * restricts by the run's client inside the statement; storage/delivery locations are shared
 * reference data and need no scope.
 */
@Injectable()
export class TrackersRepository {
  constructor(private readonly db: Db) {}

  /** Conditions of a scoped, filtered tracker query over TRACKERS_OF_RUNS. */
  private conditions(scope: AccessScope, filter: TrackerFilter): Sql[] {
    const where: Sql[] = [scope.visibleClient('pr.client_id')];
    if (filter.ids) where.push(sql`t.id = ANY(${filter.ids}::int[])`);
    if (filter.productionRunId !== undefined) where.push(sql`t.production_run_id = ${filter.productionRunId}`);
    if (filter.statuses) where.push(sql`t.status = ANY(${filter.statuses}::text[])`);
    if (filter.name) where.push(sql`strpos(lower(t.name), lower(${filter.name})) > 0`);
    if (filter.storageLocationId !== undefined) where.push(sql`t.storage_location_id = ${filter.storageLocationId}`);
    if (filter.deliveryLocationId !== undefined) where.push(sql`t.delivery_location_id = ${filter.deliveryLocationId}`);
    return where;
  }

  private orderBy(page: TrackerPageRequest): Sql {
    const direction = raw(page.sortOrder === 'desc' ? 'DESC' : 'ASC');
    return sql`${raw(SORT_COLUMNS[page.sortBy])} ${direction}, t.id ${direction}`;
  }

  /** A page and its total. */
  list(scope: AccessScope, filter: TrackerFilter, page: TrackerPageRequest): Promise<PagedRows<TrackerRow>> {
    const where = this.conditions(scope, filter);
    return this.db.replica.page<TrackerRow>(
      { columns: TRACKER_COLUMNS, from: TRACKERS_OF_RUNS, where, orderBy: this.orderBy(page) },
      page,
    );
  }

  /**
   * A page without its total, for callers that cache the total on its own (it depends on neither
   * the page nor the sort). Same statement as the rows of `list`.
   */
  listPage(scope: AccessScope, filter: TrackerFilter, page: TrackerPageRequest): Promise<TrackerRow[]> {
    const where = and(this.conditions(scope, filter));
    return this.db.replica.rows<TrackerRow>(
      sql`SELECT ${TRACKER_COLUMNS} FROM ${TRACKERS_OF_RUNS} WHERE ${where} ORDER BY ${this.orderBy(page)} LIMIT ${page.limit} OFFSET ${page.skip}`,
    );
  }

  /** The total of `list`. */
  async count(scope: AccessScope, filter: TrackerFilter): Promise<number> {
    const where = and(this.conditions(scope, filter));
    return (
      await this.db.replica.one<{ total: number }>(
        sql`SELECT count(*)::int AS total FROM ${TRACKERS_OF_RUNS} WHERE ${where}`,
      )
    ).total;
  }

  /**
   * The visible tracker. With `lock` it stays row-locked until the caller's transaction ends:
   * status writes on one tracker serialize there.
   */
  findVisible(scope: AccessScope, id: number, lock = false): Promise<TrackerRow | null> {
    return this.db.first<TrackerRow>(
      sql`SELECT ${TRACKER_COLUMNS} FROM ${TRACKERS_OF_RUNS}
           WHERE t.id = ${id} AND ${scope.visibleClient('pr.client_id')}${lock ? sql` FOR UPDATE OF t` : empty}`,
    );
  }

  /** Tracker + run + locations + status history + latest location + newest history points, one query. */
  findDetail(scope: AccessScope, id: number): Promise<TrackerDetailRow | null> {
    return this.db.first<TrackerDetailRow>(
      sql`SELECT ${TRACKER_COLUMNS},
                 pr.description AS run_description, pr.brand_id AS run_brand_id, pr.client_id AS run_client_id,
                 sl.name AS storage_location_name, dl.name AS delivery_location_name,
                 (SELECT to_jsonb(ll) FROM (${latestLocationLateral('t.id')}) ll) AS latest_location,
                 COALESCE((SELECT jsonb_agg(to_jsonb(h) ORDER BY h.timestamp, h.id)
                             FROM tracker_status_history h WHERE h.tracker_id = t.id), '[]'::jsonb) AS status_history,
                 -- p.bucket is ISO 8601 UTC text here, which sorts like the time.
                 COALESCE((SELECT jsonb_agg(to_jsonb(p) ORDER BY p.bucket DESC)
                             FROM (SELECT ${locationPointColumns('v')}
                                     FROM location_history v WHERE v.tracker_id = t.id
                                    ORDER BY v.bucket DESC LIMIT ${DETAIL_HISTORY_POINTS}) p), '[]'::jsonb) AS location_history
            FROM trackers t
            JOIN production_runs pr ON pr.id = t.production_run_id
            LEFT JOIN storage_locations sl ON sl.id = t.storage_location_id
            LEFT JOIN delivery_locations dl ON dl.id = t.delivery_location_id
           WHERE t.id = ${id} AND ${scope.visibleClient('pr.client_id')}`,
    );
  }

  async nameTaken(scope: AccessScope, runId: number, name: string, exceptId: number | null = null): Promise<boolean> {
    const row = await this.db.first<{ found: number }>(
      sql`SELECT 1 AS found FROM ${TRACKERS_OF_RUNS}
           WHERE t.production_run_id = ${runId} AND t.name = ${name} AND (${exceptId}::int IS NULL OR t.id <> ${exceptId})
             AND ${scope.visibleClient('pr.client_id')}`,
    );
    return row !== null;
  }

  /** One tracker with its first status entry; null when the name is taken in the run (or the run is invisible). */
  insert(scope: AccessScope, tracker: NewTracker, createdBy: number | null): Promise<TrackerRow | null> {
    const storageLocationId = tracker.status === 'IN_STORAGE' ? tracker.storageLocationId : null;
    return this.db.first<TrackerRow>(
      sql`WITH created AS (
            INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, notes, device_id)
            SELECT v.name, v.production_run_id, v.status, v.storage_location_id, v.delivery_location_id, v.notes, v.device_id
              FROM (VALUES (${tracker.name}::text, ${tracker.productionRunId}::int, ${tracker.status}::text, ${storageLocationId}::int,
                            ${tracker.deliveryLocationId}::int, ${tracker.notes}::text, ${tracker.deviceId ?? null}::text))
                   AS v(name, production_run_id, status, storage_location_id, delivery_location_id, notes, device_id)
             WHERE ${scope.visibleRun('v.production_run_id')}
            ON CONFLICT (production_run_id, name) DO NOTHING
            RETURNING *
          ), entry AS (
            INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, created_by)
            SELECT t.id, t.status, COALESCE(${tracker.statusTimestamp?.toISOString() ?? null}::timestamptz, now()), t.storage_location_id,
                   CASE WHEN t.status = 'DELIVERED' THEN t.delivery_location_id END, ${createdBy}::int
              FROM created t
          )
          SELECT ${TRACKER_COLUMNS} FROM created t`,
    );
  }

  update(scope: AccessScope, id: number, changes: TrackerChanges): Promise<TrackerRow | null> {
    const sets: Sql[] = [sql`updated_at = now()`];
    if (changes.name !== undefined) sets.push(sql`name = ${changes.name}`);
    if (changes.productionRunId !== undefined) sets.push(sql`production_run_id = ${changes.productionRunId}`);
    if (changes.deliveryLocationId !== undefined) sets.push(sql`delivery_location_id = ${changes.deliveryLocationId}`);
    if (changes.notes !== undefined) sets.push(sql`notes = ${changes.notes}`);
    if (changes.deviceId !== undefined) sets.push(sql`device_id = ${changes.deviceId}`);
    return this.db.first<TrackerRow>(
      sql`UPDATE trackers t SET ${join(sets, ', ')}
           WHERE t.id = ${id} AND ${scope.visibleTracker('t.id')}
           RETURNING ${TRACKER_COLUMNS}`,
    );
  }

  /** Deletes a visible tracker (entries, reports and aggregates cascade); returns it with its last location. */
  async delete(scope: AccessScope, id: number): Promise<{ row: TrackerRow; latest: LocationPoint | null } | null> {
    // All CTEs read the statement's snapshot, so the latest location is read before the cascade.
    const row = await this.db.first<TrackerRow & { latest_location: LocationPointRow | null }>(
      sql`WITH target AS (
            SELECT t.id FROM ${TRACKERS_OF_RUNS} WHERE t.id = ${id} AND ${scope.visibleClient('pr.client_id')}
          ), gone AS (
            DELETE FROM trackers t USING target WHERE t.id = target.id RETURNING ${TRACKER_COLUMNS}
          )
          SELECT gone.*, (SELECT to_jsonb(ll) FROM (${latestLocationLateral('gone.id')}) ll) AS latest_location FROM gone`,
    );
    if (!row) return null;
    return { row, latest: row.latest_location ? toLocationPoint(row.latest_location) : null };
  }
}
