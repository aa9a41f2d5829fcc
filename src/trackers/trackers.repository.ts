import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';
import { latestLocationLateral, locationPointColumns, toLocationPoint, type LocationPoint, type LocationPointRow } from '../locations/location-point.js';
import type { TrackerStatus } from './entities/tracker-status.js';
import type { SortOrder, TrackerSortField } from './dto/list-trackers.query.js';
import type { StatusEntryRow, TrackerDetailRow, TrackerRow } from './dto/tracker.response.js';

/** Anything that runs SQL: the DataSource or a transaction's EntityManager. */
export interface Sql {
  query<T = unknown>(sql: string, params?: unknown[]): Promise<T>;
}

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
  /** Time of the first status entry (default: now); single inserts only — insertMany uses createdAt. */
  statusTimestamp?: Date | null;
  /** Row creation time (default: now), also the first entry's time in insertMany; demo data back-dates it. */
  createdAt?: Date | null;
}

export interface NewStatusEntry {
  status: TrackerStatus;
  timestamp: Date;
  storageLocationId: number | null;
  deliveryLocationId: number | null;
  notes: string | null;
  createdBy: number | null;
}

export interface TrackerChanges {
  name?: string;
  productionRunId?: number;
  deliveryLocationId?: number | null;
  notes?: string | null;
}

const TRACKER_COLUMNS =
  't.id, t.name, t.production_run_id, t.status, t.storage_location_id, t.delivery_location_id, t.notes, t.created_at, t.updated_at';
const ENTRY_COLUMNS = 'id, tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by, created_at';
const SORT_COLUMNS: Record<TrackerSortField, string> = {
  id: 't.id',
  name: 't.name',
  status: 't.status',
  created_at: 't.created_at',
  updated_at: 't.updated_at',
};
/** Bulk inserts go in chunks so one statement's parameter arrays stay moderate. */
const INSERT_CHUNK = 10_000;
/** How many location-history points the detail view carries (contract §4). */
export const DETAIL_HISTORY_POINTS = 100;

/**
 * SQL for trackers and their status history. Every method takes the caller's scope first and
 * restricts by the run's client inside the statement (contract §1); storage/delivery locations
 * are shared reference data and need no scope.
 */
@Injectable()
export class TrackersRepository {
  constructor(private readonly db: DataSource) {}

  /** `FROM ... WHERE ...` of a scoped, filtered tracker query. */
  private filtered(scope: AccessScope, filter: TrackerFilter, params: unknown[]): string {
    const conditions = [scope.clientFilter('pr.client_id', params)];
    const add = (value: unknown, condition: (ref: string) => string) => {
      params.push(value);
      conditions.push(condition(`$${params.length}`));
    };
    if (filter.ids) add(filter.ids, (p) => `t.id = ANY(${p}::int[])`);
    if (filter.productionRunId !== undefined) add(filter.productionRunId, (p) => `t.production_run_id = ${p}`);
    if (filter.statuses) add(filter.statuses, (p) => `t.status = ANY(${p}::text[])`);
    if (filter.name) add(filter.name, (p) => `strpos(lower(t.name), lower(${p})) > 0`);
    if (filter.storageLocationId !== undefined) add(filter.storageLocationId, (p) => `t.storage_location_id = ${p}`);
    if (filter.deliveryLocationId !== undefined) add(filter.deliveryLocationId, (p) => `t.delivery_location_id = ${p}`);
    return `FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id WHERE ${conditions.join(' AND ')}`;
  }

  async list(scope: AccessScope, filter: TrackerFilter, page: TrackerPageRequest): Promise<{ rows: TrackerRow[]; total: number }> {
    const [rows, total] = await Promise.all([this.listPage(scope, filter, page), this.count(scope, filter)]);
    return { rows, total };
  }

  async listPage(scope: AccessScope, filter: TrackerFilter, page: TrackerPageRequest): Promise<TrackerRow[]> {
    const params: unknown[] = [];
    const from = this.filtered(scope, filter, params);
    const direction = page.sortOrder === 'desc' ? 'DESC' : 'ASC';
    params.push(page.limit, page.skip);
    return this.db.query<TrackerRow[]>(
      `SELECT ${TRACKER_COLUMNS} ${from}
        ORDER BY ${SORT_COLUMNS[page.sortBy]} ${direction}, t.id ${direction}
        LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
  }

  async count(scope: AccessScope, filter: TrackerFilter): Promise<number> {
    const params: unknown[] = [];
    const [{ total }] = await this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total ${this.filtered(scope, filter, params)}`, params);
    return total;
  }

  /** Latest location of each visible tracker among `ids`, in one statement. */
  async latestLocations(scope: AccessScope, ids: number[]): Promise<Map<number, LocationPoint>> {
    if (ids.length === 0) return new Map();
    const params: unknown[] = [ids];
    const rows = await this.db.query<(LocationPointRow & { tracker_id: number })[]>(
      `SELECT ids.id AS tracker_id, ll.*
         FROM unnest($1::int[]) AS ids(id)
         CROSS JOIN LATERAL (${latestLocationLateral('ids.id')}) ll
        WHERE ${scope.trackerFilter('ids.id', params)}`,
      params,
    );
    return new Map(rows.map((row) => [Number(row.tracker_id), toLocationPoint(row)]));
  }

  async findVisible(scope: AccessScope, id: number, sql: Sql = this.db): Promise<TrackerRow | null> {
    const params: unknown[] = [id];
    const rows = await sql.query<TrackerRow[]>(
      `SELECT ${TRACKER_COLUMNS} FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
        WHERE t.id = $1 AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return rows[0] ?? null;
  }

  /** The visible tracker, row-locked until the transaction ends: status writes on it serialize here. */
  async lockVisible(sql: Sql, scope: AccessScope, id: number): Promise<TrackerRow | null> {
    const params: unknown[] = [id];
    const rows = await sql.query<TrackerRow[]>(
      `SELECT ${TRACKER_COLUMNS} FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
        WHERE t.id = $1 AND ${scope.clientFilter('pr.client_id', params)}
        FOR UPDATE OF t`,
      params,
    );
    return rows[0] ?? null;
  }

  /** Tracker + run + locations + status history + latest location + newest history points, one query. */
  async findDetail(scope: AccessScope, id: number): Promise<TrackerDetailRow | null> {
    const params: unknown[] = [id, DETAIL_HISTORY_POINTS];
    const rows = await this.db.query<TrackerDetailRow[]>(
      `SELECT ${TRACKER_COLUMNS},
              pr.description AS run_description, pr.brand_id AS run_brand_id, pr.client_id AS run_client_id,
              sl.name AS storage_location_name, dl.name AS delivery_location_name,
              (SELECT to_jsonb(ll) FROM (${latestLocationLateral('t.id')}) ll) AS latest_location,
              COALESCE((SELECT jsonb_agg(to_jsonb(h) ORDER BY h.timestamp, h.id)
                          FROM tracker_status_history h WHERE h.tracker_id = t.id), '[]'::jsonb) AS status_history,
              -- p.bucket is ISO 8601 UTC text here, which sorts like the time.
              COALESCE((SELECT jsonb_agg(to_jsonb(p) ORDER BY p.bucket DESC)
                          FROM (SELECT ${locationPointColumns('v')}
                                  FROM location_history v WHERE v.tracker_id = t.id
                                 ORDER BY v.bucket DESC LIMIT $2) p), '[]'::jsonb) AS location_history
         FROM trackers t
         JOIN production_runs pr ON pr.id = t.production_run_id
         LEFT JOIN storage_locations sl ON sl.id = t.storage_location_id
         LEFT JOIN delivery_locations dl ON dl.id = t.delivery_location_id
        WHERE t.id = $1 AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return rows[0] ?? null;
  }

  async isRunVisible(sql: Sql, scope: AccessScope, runId: number): Promise<boolean> {
    const params: unknown[] = [runId];
    const rows = await sql.query<unknown[]>(
      `SELECT 1 FROM production_runs pr WHERE pr.id = $1 AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return rows.length > 0;
  }

  /** Which of `runIds` exist and are visible, in one statement (CSV import). */
  async visibleRunIds(scope: AccessScope, runIds: number[]): Promise<Set<number>> {
    if (runIds.length === 0) return new Set();
    const params: unknown[] = [runIds];
    const rows = await this.db.query<{ id: number }[]>(
      `SELECT pr.id FROM production_runs pr WHERE pr.id = ANY($1::int[]) AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** Which of `ids` exist as storage/delivery locations (shared reference data: unscoped). */
  async existingLocationIds(kind: 'storage' | 'delivery', ids: number[], sql: Sql = this.db): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const table = kind === 'storage' ? 'storage_locations' : 'delivery_locations';
    const rows = await sql.query<{ id: number }[]>(`SELECT id FROM ${table} WHERE id = ANY($1::int[])`, [ids]);
    return new Set(rows.map((r) => Number(r.id)));
  }

  async nameTaken(sql: Sql, scope: AccessScope, runId: number, name: string, exceptId: number | null = null): Promise<boolean> {
    const params: unknown[] = [runId, name, exceptId];
    const rows = await sql.query<unknown[]>(
      `SELECT 1 FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
        WHERE t.production_run_id = $1 AND t.name = $2 AND ($3::int IS NULL OR t.id <> $3)
          AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return rows.length > 0;
  }

  /**
   * (run, name) pairs among `pairs` that are already stored (CSV duplicate check), keyed by
   * pairKey. One statement per INSERT_CHUNK pairs keeps each parameter array (and the time spent
   * serializing it on the event loop) moderate.
   */
  async existingPairs(scope: AccessScope, pairs: { productionRunId: number; name: string }[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < pairs.length; start += INSERT_CHUNK) {
      const chunk = pairs.slice(start, start + INSERT_CHUNK);
      const params: unknown[] = [chunk.map((p) => p.productionRunId), chunk.map((p) => p.name)];
      const rows = await this.db.query<{ production_run_id: number; name: string }[]>(
        `SELECT t.production_run_id, t.name
           FROM unnest($1::int[], $2::text[]) AS u(production_run_id, name)
           JOIN trackers t ON t.production_run_id = u.production_run_id AND t.name = u.name
           JOIN production_runs pr ON pr.id = t.production_run_id
          WHERE ${scope.clientFilter('pr.client_id', params)}`,
        params,
      );
      for (const row of rows) found.add(pairKey(Number(row.production_run_id), row.name));
    }
    return found;
  }

  /**
   * Inserts trackers with their first status entry, set-based (UNNEST arrays, one statement per
   * chunk), ids in input order. The first entry is stamped with the tracker's created_at (now,
   * unless back-dated by demo data). Rows whose run is not visible are not inserted. Returns how
   * many were inserted.
   */
  async insertMany(sql: Sql, scope: AccessScope, trackers: NewTracker[], createdBy: number | null): Promise<number> {
    let inserted = 0;
    for (let start = 0; start < trackers.length; start += INSERT_CHUNK) {
      const chunk = trackers.slice(start, start + INSERT_CHUNK);
      const params: unknown[] = [
        chunk.map((t) => t.name),
        chunk.map((t) => t.productionRunId),
        chunk.map((t) => t.status),
        chunk.map((t) => (t.status === 'IN_STORAGE' ? t.storageLocationId : null)),
        chunk.map((t) => t.deliveryLocationId),
        chunk.map((t) => t.notes),
        chunk.map((t) => t.createdAt?.toISOString() ?? null),
        createdBy,
      ];
      // The history insert reads only `created`'s RETURNING rows: no join back to the input, whose
      // row estimate (unnest) would make the planner pick a nested loop.
      const [{ n }] = await sql.query<{ n: number }[]>(
        `WITH created AS (
           INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, notes, created_at, updated_at)
           SELECT u.name, u.production_run_id, u.status, u.storage_location_id, u.delivery_location_id, u.notes,
                  COALESCE(u.created_at, now()), COALESCE(u.created_at, now())
             FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::int[], $6::text[], $7::timestamptz[]) WITH ORDINALITY
                  AS u(name, production_run_id, status, storage_location_id, delivery_location_id, notes, created_at, ord)
            WHERE ${scope.runFilter('u.production_run_id', params)}
            ORDER BY u.ord
           RETURNING id, status, storage_location_id, delivery_location_id, created_at
         ), entries AS (
           -- The first status entry; a DELIVERED tracker was delivered at its destination.
           INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, created_by)
           SELECT c.id, c.status, c.created_at, c.storage_location_id,
                  CASE WHEN c.status = 'DELIVERED' THEN c.delivery_location_id END, $8::int
             FROM created c
           RETURNING 1
         )
         SELECT count(*)::int AS n FROM entries`,
        params,
      );
      inserted += n;
    }
    return inserted;
  }

  /** One tracker with its first status entry; null when the name is taken in the run (or the run is invisible). */
  async insert(sql: Sql, scope: AccessScope, tracker: NewTracker, createdBy: number | null): Promise<TrackerRow | null> {
    const params: unknown[] = [
      tracker.name,
      tracker.productionRunId,
      tracker.status,
      tracker.status === 'IN_STORAGE' ? tracker.storageLocationId : null,
      tracker.deliveryLocationId,
      tracker.notes,
      tracker.statusTimestamp?.toISOString() ?? null,
      createdBy,
    ];
    const rows = await sql.query<TrackerRow[]>(
      `WITH created AS (
         INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, notes)
         SELECT $1::text, $2::int, $3::text, $4::int, $5::int, $6::text WHERE ${scope.runFilter('$2::int', params)}
         ON CONFLICT (production_run_id, name) DO NOTHING
         RETURNING *
       ), entry AS (
         INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, created_by)
         SELECT t.id, t.status, COALESCE($7::timestamptz, now()), t.storage_location_id,
                CASE WHEN t.status = 'DELIVERED' THEN t.delivery_location_id END, $8::int
           FROM created t
       )
       SELECT ${TRACKER_COLUMNS} FROM created t`,
      params,
    );
    return rows[0] ?? null;
  }

  async update(sql: Sql, scope: AccessScope, id: number, changes: TrackerChanges): Promise<TrackerRow | null> {
    const params: unknown[] = [id];
    const sets = ['updated_at = now()'];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.productionRunId !== undefined) set('production_run_id', changes.productionRunId);
    if (changes.deliveryLocationId !== undefined) set('delivery_location_id', changes.deliveryLocationId);
    if (changes.notes !== undefined) set('notes', changes.notes);
    // Wrapped in a CTE so the driver returns plain rows (a bare UPDATE comes back as [rows, count]).
    const rows = await sql.query<TrackerRow[]>(
      `WITH changed AS (
         UPDATE trackers t SET ${sets.join(', ')}
          WHERE t.id = $1 AND ${scope.trackerFilter('t.id', params)}
          RETURNING ${TRACKER_COLUMNS}
       )
       SELECT * FROM changed`,
      params,
    );
    return rows[0] ?? null;
  }

  /**
   * Appends a status entry and, in the same statement, moves the tracker to it when it is the
   * entry with the greatest (timestamp, id): a back-dated entry never overwrites a newer state.
   * Callers hold the tracker's row lock (lockVisible), so concurrent appends serialize and each
   * compares against every committed entry. A DELIVERED entry that becomes current also sets the
   * destination when the tracker had none.
   */
  async appendStatusEntry(sql: Sql, scope: AccessScope, trackerId: number, entry: NewStatusEntry): Promise<StatusEntryRow | null> {
    const params: unknown[] = [
      trackerId,
      entry.status,
      entry.timestamp.toISOString(),
      entry.storageLocationId,
      entry.deliveryLocationId,
      entry.notes,
      entry.createdBy,
    ];
    const rows = await sql.query<StatusEntryRow[]>(
      `WITH entry AS (
         INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by)
         SELECT t.id, $2::text, $3::timestamptz, $4::int, $5::int, $6::text, $7::int FROM trackers t
          WHERE t.id = $1 AND ${scope.trackerFilter('t.id', params)}
         RETURNING ${ENTRY_COLUMNS}
       ), newer AS (
         SELECT 1 FROM tracker_status_history h JOIN entry e ON h.tracker_id = e.tracker_id
          WHERE (h.timestamp, h.id) > (e.timestamp, e.id)
          LIMIT 1
       ), moved AS (
         UPDATE trackers t
            SET status = e.status,
                storage_location_id = CASE WHEN e.status = 'IN_STORAGE' THEN e.storage_location_id END,
                delivery_location_id = CASE WHEN e.status = 'DELIVERED' THEN COALESCE(t.delivery_location_id, e.delivery_location_id)
                                            ELSE t.delivery_location_id END,
                updated_at = now()
           FROM entry e
          WHERE t.id = e.tracker_id AND NOT EXISTS (SELECT 1 FROM newer)
         RETURNING t.id
       )
       SELECT e.*, (SELECT count(*) FROM moved)::int AS moved FROM entry e`,
      params,
    );
    return rows[0] ?? null;
  }

  /** Extra status entries for many trackers at once (demo data); follow with syncStatusFromHistory. */
  async insertStatusEntries(sql: Sql, scope: AccessScope, entries: (NewStatusEntry & { trackerId: number })[]): Promise<void> {
    for (let start = 0; start < entries.length; start += INSERT_CHUNK) {
      const chunk = entries.slice(start, start + INSERT_CHUNK);
      const params: unknown[] = [
        chunk.map((e) => e.trackerId),
        chunk.map((e) => e.status),
        chunk.map((e) => e.timestamp.toISOString()),
        chunk.map((e) => e.storageLocationId),
        chunk.map((e) => e.deliveryLocationId),
        chunk.map((e) => e.notes),
        chunk.map((e) => e.createdBy),
      ];
      await sql.query(
        `INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by)
         SELECT u.* FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::int[])
                     AS u(tracker_id, status, timestamp, storage_location_id, delivery_location_id, notes, created_by)
          WHERE ${scope.trackerFilter('u.tracker_id', params)}`,
        params,
      );
    }
  }

  /** Sets each tracker's status/storage location from its latest (timestamp, id) entry, set-based. */
  async syncStatusFromHistory(sql: Sql, scope: AccessScope, trackerIds: number[]): Promise<void> {
    const params: unknown[] = [trackerIds];
    await sql.query(
      `UPDATE trackers t
          SET status = l.status,
              storage_location_id = CASE WHEN l.status = 'IN_STORAGE' THEN l.storage_location_id END
         FROM (SELECT DISTINCT ON (h.tracker_id) h.tracker_id, h.status, h.storage_location_id
                 FROM tracker_status_history h
                WHERE h.tracker_id = ANY($1::int[])
                ORDER BY h.tracker_id, h.timestamp DESC, h.id DESC) l
        WHERE t.id = l.tracker_id AND ${scope.trackerFilter('t.id', params)}`,
      params,
    );
  }

  /** Deletes a visible tracker (entries, reports and aggregates cascade); returns it with its last location. */
  async delete(scope: AccessScope, id: number): Promise<{ row: TrackerRow; latest: LocationPoint | null } | null> {
    const params: unknown[] = [id];
    // All CTEs read the statement's snapshot, so the latest location is read before the cascade.
    const rows = await this.db.query<(TrackerRow & { latest_location: LocationPointRow | null })[]>(
      `WITH target AS (
         SELECT t.id FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
          WHERE t.id = $1 AND ${scope.clientFilter('pr.client_id', params)}
       ), gone AS (
         DELETE FROM trackers t USING target WHERE t.id = target.id RETURNING ${TRACKER_COLUMNS}
       )
       SELECT gone.*, (SELECT to_jsonb(ll) FROM (${latestLocationLateral('gone.id')}) ll) AS latest_location FROM gone`,
      params,
    );
    const row = rows[0];
    if (!row) return null;
    return { row, latest: row.latest_location ? toLocationPoint(row.latest_location) : null };
  }

  /** Ascending by (timestamp, id); null when the tracker is missing or invisible. */
  async statusHistory(scope: AccessScope, id: number): Promise<StatusEntryRow[] | null> {
    const params: unknown[] = [id];
    const rows = await this.db.query<(StatusEntryRow & { visible_id: number })[]>(
      `SELECT t.id AS visible_id, h.id, h.tracker_id, h.status, h.timestamp, h.storage_location_id, h.delivery_location_id,
              h.notes, h.created_by, h.created_at
         FROM trackers t
         JOIN production_runs pr ON pr.id = t.production_run_id
         LEFT JOIN tracker_status_history h ON h.tracker_id = t.id
        WHERE t.id = $1 AND ${scope.clientFilter('pr.client_id', params)}
        ORDER BY h.timestamp, h.id`,
      params,
    );
    if (rows.length === 0) return null;
    return rows.filter((r) => r.id !== null);
  }

  async statusCounts(scope: AccessScope, productionRunId?: number): Promise<Partial<Record<TrackerStatus, number>>> {
    const params: unknown[] = [];
    const conditions = [scope.clientFilter('pr.client_id', params)];
    if (productionRunId !== undefined) {
      params.push(productionRunId);
      conditions.push(`t.production_run_id = $${params.length}`);
    }
    const rows = await this.db.query<{ status: TrackerStatus; n: number }[]>(
      `SELECT t.status, count(*)::int AS n
         FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
        WHERE ${conditions.join(' AND ')}
        GROUP BY t.status`,
      params,
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  /** Does the storage/delivery location exist (shared reference data)? */
  async locationExists(kind: 'storage' | 'delivery', id: number, sql: Sql = this.db): Promise<boolean> {
    return (await this.existingLocationIds(kind, [id], sql)).has(id);
  }
}

export function pairKey(productionRunId: number, name: string): string {
  return `${productionRunId}\u0000${name}`;
}
