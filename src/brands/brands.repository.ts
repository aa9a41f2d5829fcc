import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';

export interface BrandRow {
  id: number;
  name: string;
  client_id: number;
  created_at: Date;
  updated_at: Date;
}

const BRAND_COLUMNS = 'b.id, b.name, b.client_id, b.created_at, b.updated_at';

/**
 * SQL for brands. Visibility: brands of the caller's clients (`b.client_id`).
 * Methods taking `m` run inside the caller's transaction (defaults to the pool).
 */
@Injectable()
export class BrandsRepository {
  constructor(private readonly db: DataSource) {}

  async list(
    scope: AccessScope,
    filter: { clientId?: number; name?: string },
    page: { skip: number; limit: number },
  ): Promise<{ rows: BrandRow[]; total: number }> {
    const params: unknown[] = [];
    const where = [scope.clientFilter('b.client_id', params)];
    if (filter.clientId !== undefined) {
      params.push(filter.clientId);
      where.push(`b.client_id = $${params.length}`);
    }
    if (filter.name !== undefined) {
      params.push(filter.name);
      where.push(`strpos(lower(b.name), lower($${params.length})) > 0`);
    }
    const condition = where.join(' AND ');
    const [rows, [{ total }]] = await Promise.all([
      this.db.query<BrandRow[]>(
        `SELECT ${BRAND_COLUMNS} FROM brands b WHERE ${condition} ORDER BY b.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, page.limit, page.skip],
      ),
      this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM brands b WHERE ${condition}`, params),
    ]);
    return { rows, total };
  }

  /** The visible brand, optionally locked for an update/delete in the caller's transaction. */
  async findById(scope: AccessScope, id: number, m: EntityManager = this.db.manager, lock = false): Promise<BrandRow | null> {
    const params: unknown[] = [id];
    const rows = await m.query<BrandRow[]>(
      `SELECT ${BRAND_COLUMNS} FROM brands b WHERE b.id = $1 AND ${scope.clientFilter('b.client_id', params)}${lock ? ' FOR UPDATE' : ''}`,
      params,
    );
    return rows[0] ?? null;
  }

  /** Whether the client exists and is visible (target of a brand's client_id). */
  async clientExists(scope: AccessScope, clientId: number, m: EntityManager = this.db.manager): Promise<boolean> {
    const params: unknown[] = [clientId];
    const rows = await m.query<{ found: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM clients c WHERE c.id = $1 AND ${scope.clientFilter('c.id', params)}) AS found`,
      params,
    );
    return rows[0].found;
  }

  /**
   * Whether another brand of the client uses the name (case-insensitive, as the unique index
   * brands_client_name_key). Deliberately unscoped: the rule holds whoever looks.
   */
  async nameTaken(_scope: AccessScope, clientId: number, name: string, exceptId: number | null, m: EntityManager = this.db.manager): Promise<boolean> {
    const rows = await m.query<{ taken: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM brands WHERE client_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3::int) AS taken`,
      [clientId, name, exceptId],
    );
    return rows[0].taken;
  }

  /** Writes are admin-only (the controller guards them), so inserts need no scope condition. */
  async insert(_scope: AccessScope, values: { name: string; clientId: number }, m: EntityManager = this.db.manager): Promise<BrandRow> {
    const rows = await m.query<BrandRow[]>(`INSERT INTO brands AS b (name, client_id) VALUES ($1, $2) RETURNING ${BRAND_COLUMNS}`, [
      values.name,
      values.clientId,
    ]);
    return rows[0];
  }

  /** A changed client_id is propagated to the brand's runs by the brands_propagate_client trigger. */
  async update(
    scope: AccessScope,
    id: number,
    values: { name?: string; clientId?: number },
    m: EntityManager = this.db.manager,
  ): Promise<BrandRow | null> {
    const params: unknown[] = [id, values.name ?? null, values.clientId ?? null];
    const rows = await m.query<[BrandRow[], number]>(
      `UPDATE brands AS b SET name = COALESCE($2, b.name), client_id = COALESCE($3, b.client_id), updated_at = now()
        WHERE b.id = $1 AND ${scope.clientFilter('b.client_id', params)} RETURNING ${BRAND_COLUMNS}`,
      params,
    );
    return rows[0][0] ?? null;
  }

  /** Ids of the brand's production runs (whose cached analytics a client move invalidates). */
  async runIds(scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<number[]> {
    const params: unknown[] = [id];
    const rows = await m.query<{ id: number }[]>(
      `SELECT pr.id FROM production_runs pr WHERE pr.brand_id = $1 AND ${scope.clientFilter('pr.client_id', params)}`,
      params,
    );
    return rows.map((r) => r.id);
  }

  async references(_scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<{ productionRuns: boolean }> {
    const rows = await m.query<{ production_runs: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM production_runs WHERE brand_id = $1) AS production_runs`,
      [id],
    );
    return { productionRuns: rows[0].production_runs };
  }

  async delete(scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<BrandRow | null> {
    const params: unknown[] = [id];
    const rows = await m.query<[BrandRow[], number]>(
      `DELETE FROM brands AS b WHERE b.id = $1 AND ${scope.clientFilter('b.client_id', params)} RETURNING ${BRAND_COLUMNS}`,
      params,
    );
    return rows[0][0] ?? null;
  }
}
