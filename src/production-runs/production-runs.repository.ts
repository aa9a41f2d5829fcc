import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, join, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';

export type ProductionRunRow = Tables['production_runs'] & { tracker_count: number };

const RUN_COLUMNS = raw(
  'pr.id, pr.description, pr.brand_id, pr.client_id, pr.start_date, pr.end_date, pr.alert_silent_hours, pr.created_at, pr.updated_at',
);

/**
 * Runs with their tracker count: one index-only count per run returned (trackers_run_name_key
 * leads with production_run_id), evaluated only for the rows of the page, never a query per row
 * from the app and never for the total.
 */
const RUN_WITH_COUNT = sql`${RUN_COLUMNS}, (SELECT count(*)::int FROM trackers t WHERE t.production_run_id = pr.id) AS tracker_count`;

interface ProductionRunChanges {
  description?: string;
  brandId?: number;
  startDate?: Date | null;
  endDate?: Date | null;
  alertSilentHours?: number | null;
}

/**
 * SQL for production runs. Visibility: runs of the caller's clients (`pr.client_id`, the brand's
 * client kept by the production_runs_set_client trigger).
 */
@Injectable()
export class ProductionRunsRepository {
  constructor(private readonly db: Db) {}

  list(
    scope: AccessScope,
    filter: { brandId?: number; clientId?: number },
    page: { skip: number; limit: number },
  ): Promise<PagedRows<ProductionRunRow>> {
    const where: Sql[] = [scope.visibleClient('pr.client_id')];
    if (filter.brandId !== undefined) where.push(sql`pr.brand_id = ${filter.brandId}`);
    if (filter.clientId !== undefined) where.push(sql`pr.client_id = ${filter.clientId}`);
    return this.db.replica.page<ProductionRunRow>(
      { columns: RUN_WITH_COUNT, from: sql`production_runs pr`, where, orderBy: sql`pr.id` },
      page,
    );
  }

  findById(scope: AccessScope, id: number): Promise<ProductionRunRow | null> {
    return this.db.first<ProductionRunRow>(
      sql`SELECT ${RUN_WITH_COUNT} FROM production_runs pr WHERE pr.id = ${id} AND ${scope.visibleClient('pr.client_id')}`,
    );
  }

  /** Locks the visible run for an update/delete in the caller's transaction (no tracker count). */
  lock(scope: AccessScope, id: number): Promise<Omit<ProductionRunRow, 'tracker_count'> | null> {
    return this.db.first<Omit<ProductionRunRow, 'tracker_count'>>(
      sql`SELECT ${RUN_COLUMNS} FROM production_runs pr WHERE pr.id = ${id} AND ${scope.visibleClient('pr.client_id')} FOR UPDATE`,
    );
  }

  /** Whether the brand exists and is visible (target of a run's brand_id). */
  async brandExists(scope: AccessScope, brandId: number): Promise<boolean> {
    const row = await this.db.one<{ found: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM brands b WHERE b.id = ${brandId} AND ${scope.visibleClient('b.client_id')}) AS found`,
    );
    return row.found;
  }

  /** Writes are admin-only (the controller guards them); client_id is set by the trigger. */
  insert(values: {
    description: string;
    brandId: number;
    startDate: Date | null;
    endDate: Date | null;
    alertSilentHours?: number | null;
  }): Promise<ProductionRunRow> {
    return this.db.one<ProductionRunRow>(
      sql`INSERT INTO production_runs AS pr (description, brand_id, start_date, end_date, alert_silent_hours)
        VALUES (${values.description}, ${values.brandId}, ${values.startDate}, ${values.endDate}, ${values.alertSilentHours ?? null})
        RETURNING ${RUN_COLUMNS}, 0 AS tracker_count`,
    );
  }

  /** Sets exactly the given fields (null clears a date); returns whether the visible run was updated. */
  async update(scope: AccessScope, id: number, changes: ProductionRunChanges): Promise<boolean> {
    const sets: Sql[] = [sql`updated_at = now()`];
    if (changes.description !== undefined) sets.push(sql`description = ${changes.description}`);
    if (changes.brandId !== undefined) sets.push(sql`brand_id = ${changes.brandId}`);
    if (changes.startDate !== undefined) sets.push(sql`start_date = ${changes.startDate}`);
    if (changes.endDate !== undefined) sets.push(sql`end_date = ${changes.endDate}`);
    if (changes.alertSilentHours !== undefined) sets.push(sql`alert_silent_hours = ${changes.alertSilentHours}`);
    const affected = await this.db.execute(
      sql`UPDATE production_runs AS pr SET ${join(sets, ', ')} WHERE pr.id = ${id} AND ${scope.visibleClient('pr.client_id')}`,
    );
    return affected > 0;
  }

  references(id: number): Promise<{ trackers: boolean }> {
    return this.db.one<{ trackers: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM trackers WHERE production_run_id = ${id}) AS trackers`,
    );
  }

  /** Deletes an unreferenced run (so its tracker_count is 0). */
  delete(scope: AccessScope, id: number): Promise<ProductionRunRow | null> {
    return this.db.first<ProductionRunRow>(
      sql`DELETE FROM production_runs AS pr WHERE pr.id = ${id} AND ${scope.visibleClient('pr.client_id')}
        RETURNING ${RUN_COLUMNS}, 0 AS tracker_count`,
    );
  }
}
