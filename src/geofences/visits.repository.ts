import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';

export type VisitRow = Omit<Tables['geofence_visits'], 'id'> & {
  id: string | number;
  location_name: string;
  duration_minutes: string;
};

/** Whose visits: one tracker's, or those at one location. */
export type VisitsOf = { trackerId: number } | { storageLocationId: number } | { deliveryLocationId: number };

export interface VisitFilter {
  confirmed?: boolean;
  open?: boolean;
}

const VISIT_COLUMNS = raw(
  `v.id, v.tracker_id, v.storage_location_id, v.delivery_location_id, coalesce(sl.name, dl.name) AS location_name, v.entered_at,
   v.last_seen_at, v.exited_at, round((extract(epoch FROM v.last_seen_at - v.entered_at) / 60)::numeric, 2)::text AS duration_minutes,
   v.report_count, v.confirmed`,
);
const VISITS_FROM = raw(
  `geofence_visits v LEFT JOIN storage_locations sl ON sl.id = v.storage_location_id
   LEFT JOIN delivery_locations dl ON dl.id = v.delivery_location_id`,
);

/** Reads of geofence_visits, scoped to the caller's trackers. */
@Injectable()
export class VisitsRepository {
  constructor(private readonly db: Db) {}

  /** Visits of `of`, newest entered_at first. */
  page(
    scope: AccessScope,
    of: VisitsOf,
    filter: VisitFilter,
    page: { skip: number; limit: number },
  ): Promise<PagedRows<VisitRow>> {
    const at =
      'trackerId' in of
        ? sql`v.tracker_id = ${of.trackerId}`
        : 'storageLocationId' in of
          ? sql`v.storage_location_id = ${of.storageLocationId}`
          : sql`v.delivery_location_id = ${of.deliveryLocationId}`;
    const where: Sql[] = [at, scope.visibleTracker('v.tracker_id')];
    if (filter.confirmed !== undefined) where.push(sql`v.confirmed = ${filter.confirmed}`);
    if (filter.open !== undefined) where.push(filter.open ? sql`v.exited_at IS NULL` : sql`v.exited_at IS NOT NULL`);
    return this.db.replica.page<VisitRow>(
      { columns: VISIT_COLUMNS, from: VISITS_FROM, where, orderBy: sql`v.entered_at DESC, v.id DESC` },
      page,
    );
  }

  async trackerVisible(scope: AccessScope, trackerId: number): Promise<boolean> {
    return (
      (await this.db.first(
        sql`SELECT 1 FROM trackers t WHERE t.id = ${trackerId} AND ${scope.visibleTracker('t.id')}`,
      )) !== null
    );
  }

  /** Locations are shared reference data: every caller sees every one. */
  async locationExists(type: 'storage' | 'delivery', id: number): Promise<boolean> {
    const table = raw(type === 'storage' ? 'storage_locations' : 'delivery_locations');
    return (await this.db.first(sql`SELECT 1 FROM ${table} WHERE id = ${id}`)) !== null;
  }
}
