import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';

export interface ProductionRunRow {
  id: number;
  description: string;
  brand_id: number;
  client_id: number;
  start_date: Date | null;
  end_date: Date | null;
  tracker_count: number;
  created_at: Date;
  updated_at: Date;
}

const RUN_COLUMNS = 'pr.id, pr.description, pr.brand_id, pr.client_id, pr.start_date, pr.end_date, pr.created_at, pr.updated_at';

/**
 * Runs with their tracker count: one LATERAL index-only count per run on the page
 * (trackers_run_name_key leads with production_run_id), never a query per row from the app.
 */
const RUN_SELECT = `SELECT ${RUN_COLUMNS}, tc.tracker_count
  FROM production_runs pr
  CROSS JOIN LATERAL (SELECT count(*)::int AS tracker_count FROM trackers t WHERE t.production_run_id = pr.id) tc`;

export interface ProductionRunChanges {
  description?: string;
  brandId?: number;
  startDate?: Date | null;
  endDate?: Date | null;
}

/**
 * SQL for production runs. Visibility: runs of the caller's clients (`pr.client_id`, the brand's
 * client kept by the production_runs_set_client trigger). Methods taking `m` run inside the
 * caller's transaction (defaults to the pool).
 */
@Injectable()
export class ProductionRunsRepository {
  constructor(private readonly db: DataSource) {}

  async list(
    scope: AccessScope,
    filter: { brandId?: number; clientId?: number },
    page: { skip: number; limit: number },
  ): Promise<{ rows: ProductionRunRow[]; total: number }> {
    const params: unknown[] = [];
    const where = [scope.clientFilter('pr.client_id', params)];
    if (filter.brandId !== undefined) {
      params.push(filter.brandId);
      where.push(`pr.brand_id = $${params.length}`);
    }
    if (filter.clientId !== undefined) {
      params.push(filter.clientId);
      where.push(`pr.client_id = $${params.length}`);
    }
    const condition = where.join(' AND ');
    const [rows, [{ total }]] = await Promise.all([
      this.db.query<ProductionRunRow[]>(
        `${RUN_SELECT} WHERE ${condition} ORDER BY pr.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, page.limit, page.skip],
      ),
      this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM production_runs pr WHERE ${condition}`, params),
    ]);
    return { rows, total };
  }

  async findById(scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<ProductionRunRow | null> {
    const params: unknown[] = [id];
    const rows = await m.query<ProductionRunRow[]>(`${RUN_SELECT} WHERE pr.id = $1 AND ${scope.clientFilter('pr.client_id', params)}`, params);
    return rows[0] ?? null;
  }

  /** Locks the visible run for an update/delete in the caller's transaction (no tracker count). */
  async lock(scope: AccessScope, id: number, m: EntityManager): Promise<Omit<ProductionRunRow, 'tracker_count'> | null> {
    const params: unknown[] = [id];
    const rows = await m.query<Omit<ProductionRunRow, 'tracker_count'>[]>(
      `SELECT ${RUN_COLUMNS} FROM production_runs pr WHERE pr.id = $1 AND ${scope.clientFilter('pr.client_id', params)} FOR UPDATE`,
      params,
    );
    return rows[0] ?? null;
  }

  /** Whether the brand exists and is visible (target of a run's brand_id). */
  async brandExists(scope: AccessScope, brandId: number, m: EntityManager = this.db.manager): Promise<boolean> {
    const params: unknown[] = [brandId];
    const rows = await m.query<{ found: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM brands b WHERE b.id = $1 AND ${scope.clientFilter('b.client_id', params)}) AS found`,
      params,
    );
    return rows[0].found;
  }

  /** Writes are admin-only (the controller guards them); client_id is set by the trigger. */
  async insert(
    _scope: AccessScope,
    values: { description: string; brandId: number; startDate: Date | null; endDate: Date | null },
    m: EntityManager = this.db.manager,
  ): Promise<ProductionRunRow> {
    const rows = await m.query<ProductionRunRow[]>(
      `INSERT INTO production_runs AS pr (description, brand_id, start_date, end_date) VALUES ($1, $2, $3, $4)
       RETURNING ${RUN_COLUMNS}, 0 AS tracker_count`,
      [values.description, values.brandId, values.startDate, values.endDate],
    );
    return rows[0];
  }

  /** Sets exactly the given fields (null clears a date); returns whether the visible run was updated. */
  async update(scope: AccessScope, id: number, changes: ProductionRunChanges, m: EntityManager = this.db.manager): Promise<boolean> {
    const params: unknown[] = [id];
    const sets = ['updated_at = now()'];
    const set = (column: string, value: unknown) => {
      if (value === undefined) return;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    set('description', changes.description);
    set('brand_id', changes.brandId);
    set('start_date', changes.startDate);
    set('end_date', changes.endDate);
    const [, affected] = await m.query<[unknown[], number]>(
      `UPDATE production_runs AS pr SET ${sets.join(', ')} WHERE pr.id = $1 AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return affected > 0;
  }

  async references(_scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<{ trackers: boolean }> {
    const rows = await m.query<{ trackers: boolean }[]>(`SELECT EXISTS (SELECT 1 FROM trackers WHERE production_run_id = $1) AS trackers`, [id]);
    return rows[0];
  }

  /** Deletes an unreferenced run (so its tracker_count is 0). */
  async delete(scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<ProductionRunRow | null> {
    const params: unknown[] = [id];
    const rows = await m.query<[ProductionRunRow[], number]>(
      `DELETE FROM production_runs AS pr WHERE pr.id = $1 AND ${scope.clientFilter('pr.client_id', params)}
       RETURNING ${RUN_COLUMNS}, 0 AS tracker_count`,
      params,
    );
    return rows[0][0] ?? null;
  }
}
