import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, raw, sql } from '../infrastructure/database/db.js';

const LOCATION_TABLES = { storage: raw('storage_locations'), delivery: raw('delivery_locations') } as const;

/**
 * What a tracker points at: production runs (scoped by their client) and storage/delivery
 * locations (shared reference data: unscoped).
 */
@Injectable()
export class TrackerReferencesRepository {
  constructor(private readonly db: Db) {}

  async isRunVisible(scope: AccessScope, runId: number): Promise<boolean> {
    const row = await this.db.first<{ found: number }>(
      sql`SELECT 1 AS found FROM production_runs pr WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`,
    );
    return row !== null;
  }

  /** Which of `runIds` exist and are visible, in one statement (CSV import). */
  async visibleRunIds(scope: AccessScope, runIds: number[]): Promise<Set<number>> {
    if (runIds.length === 0) return new Set();
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT pr.id FROM production_runs pr WHERE pr.id = ANY(${runIds}::int[]) AND ${scope.visibleClient('pr.client_id')}`,
    );
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** Which of `ids` exist as storage/delivery locations. */
  async existingLocationIds(kind: 'storage' | 'delivery', ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT id FROM ${LOCATION_TABLES[kind]} WHERE id = ANY(${ids}::int[])`,
    );
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** Does the storage/delivery location exist? */
  async locationExists(kind: 'storage' | 'delivery', id: number): Promise<boolean> {
    return (await this.existingLocationIds(kind, [id])).has(id);
  }
}
