import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, empty, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';

export type BrandRow = Tables['brands'];

const BRAND_COLUMNS = raw('b.id, b.name, b.client_id, b.created_at, b.updated_at');

/** SQL for brands. Visibility: brands of the caller's clients (`b.client_id`). */
@Injectable()
export class BrandsRepository {
  constructor(private readonly db: Db) {}

  list(
    scope: AccessScope,
    filter: { clientId?: number; name?: string },
    page: { skip: number; limit: number },
  ): Promise<PagedRows<BrandRow>> {
    const where: Sql[] = [scope.visibleClient('b.client_id')];
    if (filter.clientId !== undefined) where.push(sql`b.client_id = ${filter.clientId}`);
    if (filter.name !== undefined) where.push(sql`strpos(lower(b.name), lower(${filter.name})) > 0`);
    return this.db.replica.page<BrandRow>(
      { columns: BRAND_COLUMNS, from: sql`brands b`, where, orderBy: sql`b.id` },
      page,
    );
  }

  /** The visible brand, optionally locked for an update/delete in the caller's transaction. */
  findById(scope: AccessScope, id: number, lock = false): Promise<BrandRow | null> {
    return this.db.first<BrandRow>(
      sql`SELECT ${BRAND_COLUMNS} FROM brands b WHERE b.id = ${id} AND ${scope.visibleClient('b.client_id')}${lock ? sql` FOR UPDATE` : empty}`,
    );
  }

  /** Whether the client exists and is visible (target of a brand's client_id). */
  async clientExists(scope: AccessScope, clientId: number): Promise<boolean> {
    const row = await this.db.one<{ found: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM clients c WHERE c.id = ${clientId} AND ${scope.visibleClient('c.id')}) AS found`,
    );
    return row.found;
  }

  /**
   * Whether another brand of the client uses the name (case-insensitive, as the unique index
   * brands_client_name_key). Unscoped: the rule holds whoever looks.
   */
  async nameTaken(clientId: number, name: string, exceptId: number | null): Promise<boolean> {
    const row = await this.db.one<{ taken: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM brands WHERE client_id = ${clientId} AND lower(name) = lower(${name}) AND id IS DISTINCT FROM ${exceptId}::int) AS taken`,
    );
    return row.taken;
  }

  /** Writes are admin-only (the controller guards them), so inserts need no scope condition. */
  insert(values: { name: string; clientId: number }): Promise<BrandRow> {
    return this.db.one<BrandRow>(
      sql`INSERT INTO brands AS b (name, client_id) VALUES (${values.name}, ${values.clientId}) RETURNING ${BRAND_COLUMNS}`,
    );
  }

  /** A changed client_id is propagated to the brand's runs by the brands_propagate_client trigger. */
  update(scope: AccessScope, id: number, values: { name?: string; clientId?: number }): Promise<BrandRow | null> {
    return this.db.first<BrandRow>(
      sql`UPDATE brands AS b SET name = COALESCE(${values.name ?? null}, b.name), client_id = COALESCE(${values.clientId ?? null}::int, b.client_id), updated_at = now()
        WHERE b.id = ${id} AND ${scope.visibleClient('b.client_id')} RETURNING ${BRAND_COLUMNS}`,
    );
  }

  /** Ids of the brand's production runs (whose cached analytics a client move invalidates). */
  async runIds(scope: AccessScope, id: number): Promise<number[]> {
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT pr.id FROM production_runs pr WHERE pr.brand_id = ${id} AND ${scope.visibleClient('pr.client_id')}`,
    );
    return rows.map((r) => r.id);
  }

  async references(id: number): Promise<{ productionRuns: boolean }> {
    const row = await this.db.one<{ production_runs: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM production_runs WHERE brand_id = ${id}) AS production_runs`,
    );
    return { productionRuns: row.production_runs };
  }

  delete(scope: AccessScope, id: number): Promise<BrandRow | null> {
    return this.db.first<BrandRow>(
      sql`DELETE FROM brands AS b WHERE b.id = ${id} AND ${scope.visibleClient('b.client_id')} RETURNING ${BRAND_COLUMNS}`,
    );
  }
}
