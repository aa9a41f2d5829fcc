import { Injectable } from '@nestjs/common';
import { Db, empty, join, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';

/** Storage and delivery locations have the same columns. */
export type PlaceRow = Tables['storage_locations'];

interface PlaceChanges {
  name?: string;
  address?: string | null;
  latitude?: number | null;
  longitude?: number | null;
  radius_m?: number;
  dwell_minutes?: number | null;
}

/** A table whose foreign key points at the place table, named for the 409 detail. */
interface PlaceReference {
  /** e.g. "trackers" in "Storage location is still referenced by trackers". */
  what: string;
  table: 'trackers' | 'tracker_status_history' | 'geofence_visits';
}

const PLACE_COLUMNS = raw(
  'p.id, p.name, p.address, p.latitude, p.longitude, p.radius_m, p.dwell_minutes, p.created_at, p.updated_at',
);

/** What must be gone before a place can be deleted, in the order the 409 reports it. */
const REFERENCED_BY: readonly PlaceReference[] = [
  { what: 'trackers', table: 'trackers' },
  { what: 'tracker status history', table: 'tracker_status_history' },
  { what: 'visits', table: 'geofence_visits' },
];

/** A location's geofence radius when its create body names none. */
const DEFAULT_RADIUS_M = 250;

/**
 * SQL for a location table (storage_locations or delivery_locations; same columns).
 * Locations are shared reference data, readable by every admin and user, so no method takes an
 * access scope. Writes are admin-only (guarded by the controllers).
 */
export class PlacesRepository {
  private readonly table: Sql;
  private readonly column: Sql;

  constructor(
    private readonly db: Db,
    table: 'storage_locations' | 'delivery_locations',
    /** The column of trackers, tracker_status_history and geofence_visits pointing here (same name in each). */
    column: 'storage_location_id' | 'delivery_location_id',
  ) {
    this.table = raw(table);
    this.column = raw(column);
  }

  list(filter: { name?: string }, page: { skip: number; limit: number }): Promise<PagedRows<PlaceRow>> {
    const where: Sql[] = [];
    if (filter.name !== undefined) where.push(sql`strpos(lower(p.name), lower(${filter.name})) > 0`);
    return this.db.replica.page<PlaceRow>(
      { columns: PLACE_COLUMNS, from: sql`${this.table} p`, where, orderBy: sql`p.id` },
      page,
    );
  }

  /** The place, optionally locked for an update/delete in the caller's transaction. */
  findById(id: number, lock = false): Promise<PlaceRow | null> {
    return this.db.first<PlaceRow>(
      sql`SELECT ${PLACE_COLUMNS} FROM ${this.table} p WHERE p.id = ${id}${lock ? sql` FOR UPDATE` : empty}`,
    );
  }

  insert(values: PlaceChanges & { name: string }): Promise<PlaceRow> {
    return this.db.one<PlaceRow>(
      sql`INSERT INTO ${this.table} AS p (name, address, latitude, longitude, radius_m, dwell_minutes)
        VALUES (${values.name}, ${values.address ?? null}, ${values.latitude ?? null}, ${values.longitude ?? null},
                ${values.radius_m ?? DEFAULT_RADIUS_M}::int, ${values.dwell_minutes ?? null}::int) RETURNING ${PLACE_COLUMNS}`,
    );
  }

  /** Sets exactly the given fields (null clears a nullable one). */
  update(id: number, changes: PlaceChanges): Promise<PlaceRow | null> {
    const sets: Sql[] = [sql`updated_at = now()`];
    for (const column of ['name', 'address', 'latitude', 'longitude', 'radius_m', 'dwell_minutes'] as const) {
      if (changes[column] !== undefined) sets.push(sql`${raw(column)} = ${changes[column]}`);
    }
    return this.db.first<PlaceRow>(
      sql`UPDATE ${this.table} AS p SET ${join(sets, ', ')} WHERE p.id = ${id} RETURNING ${PLACE_COLUMNS}`,
    );
  }

  /** The first reference that still points at the place, or null (one statement, short-circuiting). */
  async firstReference(id: number): Promise<PlaceReference | null> {
    const checks = REFERENCED_BY.map(
      (ref, i) =>
        sql`SELECT ${raw(String(i))} AS i WHERE EXISTS (SELECT 1 FROM ${raw(ref.table)} WHERE ${this.column} = ${id})`,
    );
    const row = await this.db.first<{ i: number }>(sql`${join(checks, ' UNION ALL ')} LIMIT 1`);
    return row ? REFERENCED_BY[row.i] : null;
  }

  /**
   * Runs whose analytics show the place's name: a tracker of the run has it as destination /
   * current storage, or a status entry of one of its trackers points at it.
   */
  async runIdsShowing(id: number): Promise<number[]> {
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT t.production_run_id AS id FROM trackers t WHERE t.${this.column} = ${id}
        UNION
        SELECT t.production_run_id FROM tracker_status_history h JOIN trackers t ON t.id = h.tracker_id WHERE h.${this.column} = ${id}`,
    );
    return rows.map((r) => r.id);
  }

  delete(id: number): Promise<PlaceRow | null> {
    return this.db.first<PlaceRow>(sql`DELETE FROM ${this.table} AS p WHERE p.id = ${id} RETURNING ${PLACE_COLUMNS}`);
  }
}

/** SQL for storage_locations (referenced by trackers and status entries through storage_location_id). */
@Injectable()
export class StorageLocationsRepository extends PlacesRepository {
  constructor(db: Db) {
    super(db, 'storage_locations', 'storage_location_id');
  }
}

/** SQL for delivery_locations (referenced by trackers and status entries through delivery_location_id). */
@Injectable()
export class DeliveryLocationsRepository extends PlacesRepository {
  constructor(db: Db) {
    super(db, 'delivery_locations', 'delivery_location_id');
  }
}
