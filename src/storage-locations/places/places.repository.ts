import type { DataSource, EntityManager } from 'typeorm';
import type { AccessScope } from '../../common/auth/access-scope.js';

export interface PlaceRow {
  id: number;
  name: string;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface PlaceChanges {
  name?: string;
  address?: string | null;
  latitude?: number | null;
  longitude?: number | null;
}

/** A table whose foreign key points at the place table, named for the 409 detail. */
export interface PlaceReference {
  /** e.g. "trackers" in "Storage location is still referenced by trackers". */
  what: string;
  table: 'trackers' | 'tracker_status_history';
}

const PLACE_COLUMNS = 'p.id, p.name, p.address, p.latitude, p.longitude, p.created_at, p.updated_at';

/**
 * SQL for a location table (storage_locations or delivery_locations; same columns).
 * Locations are shared reference data, readable by every admin and user (contract §1): the scope
 * argument is taken like everywhere else but adds no condition. Writes are admin-only (guarded by
 * the controllers). Methods taking `m` run inside the caller's transaction.
 */
export class PlacesRepository {
  constructor(
    private readonly db: DataSource,
    private readonly table: 'storage_locations' | 'delivery_locations',
    /** The column of trackers and tracker_status_history pointing here (same name in both). */
    private readonly column: 'storage_location_id' | 'delivery_location_id',
  ) {}

  /** What must be gone before a place can be deleted, in the order the 409 reports it. */
  readonly referencedBy: readonly PlaceReference[] = [
    { what: 'trackers', table: 'trackers' },
    { what: 'tracker status history', table: 'tracker_status_history' },
  ];

  async list(_scope: AccessScope, filter: { name?: string }, page: { skip: number; limit: number }): Promise<{ rows: PlaceRow[]; total: number }> {
    const params: unknown[] = [];
    const where = ['TRUE'];
    if (filter.name !== undefined) {
      params.push(filter.name);
      where.push(`strpos(lower(p.name), lower($${params.length})) > 0`);
    }
    const condition = where.join(' AND ');
    const [rows, [{ total }]] = await Promise.all([
      this.db.query<PlaceRow[]>(
        `SELECT ${PLACE_COLUMNS} FROM ${this.table} p WHERE ${condition} ORDER BY p.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, page.limit, page.skip],
      ),
      this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM ${this.table} p WHERE ${condition}`, params),
    ]);
    return { rows, total };
  }

  async findById(_scope: AccessScope, id: number, m: EntityManager = this.db.manager, lock = false): Promise<PlaceRow | null> {
    const rows = await m.query<PlaceRow[]>(`SELECT ${PLACE_COLUMNS} FROM ${this.table} p WHERE p.id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    return rows[0] ?? null;
  }

  async insert(_scope: AccessScope, values: PlaceChanges & { name: string }, m: EntityManager = this.db.manager): Promise<PlaceRow> {
    const rows = await m.query<PlaceRow[]>(
      `INSERT INTO ${this.table} AS p (name, address, latitude, longitude) VALUES ($1, $2, $3, $4) RETURNING ${PLACE_COLUMNS}`,
      [values.name, values.address ?? null, values.latitude ?? null, values.longitude ?? null],
    );
    return rows[0];
  }

  /** Sets exactly the given fields (null clears a nullable one). */
  async update(_scope: AccessScope, id: number, changes: PlaceChanges, m: EntityManager = this.db.manager): Promise<PlaceRow | null> {
    const params: unknown[] = [id];
    const sets = ['updated_at = now()'];
    for (const column of ['name', 'address', 'latitude', 'longitude'] as const) {
      if (changes[column] === undefined) continue;
      params.push(changes[column]);
      sets.push(`${column} = $${params.length}`);
    }
    const rows = await m.query<[PlaceRow[], number]>(
      `UPDATE ${this.table} AS p SET ${sets.join(', ')} WHERE p.id = $1 RETURNING ${PLACE_COLUMNS}`,
      params,
    );
    return rows[0][0] ?? null;
  }

  /** The first reference that still points at the place, or null (one statement, short-circuiting). */
  async firstReference(_scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<PlaceReference | null> {
    const checks = this.referencedBy.map((ref, i) => `SELECT ${i} AS i WHERE EXISTS (SELECT 1 FROM ${ref.table} WHERE ${this.column} = $1)`);
    const rows = await m.query<{ i: number }[]>(`${checks.join(' UNION ALL ')} LIMIT 1`, [id]);
    return rows.length ? this.referencedBy[rows[0].i] : null;
  }

  /**
   * Runs whose analytics show the place's name: a tracker of the run has it as destination /
   * current storage, or a status entry of one of its trackers points at it.
   */
  async runIdsShowing(_scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<number[]> {
    const rows = await m.query<{ id: number }[]>(
      `SELECT t.production_run_id AS id FROM trackers t WHERE t.${this.column} = $1
       UNION
       SELECT t.production_run_id FROM tracker_status_history h JOIN trackers t ON t.id = h.tracker_id WHERE h.${this.column} = $1`,
      [id],
    );
    return rows.map((r) => r.id);
  }

  async delete(_scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<PlaceRow | null> {
    const rows = await m.query<[PlaceRow[], number]>(`DELETE FROM ${this.table} AS p WHERE p.id = $1 RETURNING ${PLACE_COLUMNS}`, [id]);
    return rows[0][0] ?? null;
  }
}
