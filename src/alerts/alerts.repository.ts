import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { AlertKind } from './dto/alert-kinds.js';

export interface AlertRow {
  id: string;
  kind: AlertKind;
  tracker_id: number;
  tracker_name: string;
  production_run_id: number;
  client_id: number;
  opened_at: Date;
  resolved_at: Date | null;
  details: Record<string, unknown>;
}

export interface AlertFilter {
  open?: boolean;
  kind?: readonly AlertKind[];
  trackerId?: number;
  productionRunId?: number;
}

export interface AlertSummaryRow {
  silent: number;
  overdue: number;
  battery_low: number;
}

const COLUMNS = sql`a.id::text AS id, a.kind, a.tracker_id, t.name AS tracker_name, t.production_run_id, pr.client_id,
  a.opened_at, a.resolved_at, a.details`;
const FROM = sql`alerts a JOIN trackers t ON t.id = a.tracker_id JOIN production_runs pr ON pr.id = t.production_run_id`;

/**
 * Reads of alerts, scoped like trackers: an alert is visible when its tracker's client is (the
 * tracker's run now: a tracker moved to another run takes its alerts along).
 */
@Injectable()
export class AlertsRepository {
  constructor(private readonly db: Db) {}

  list(scope: AccessScope, filter: AlertFilter, page: { skip: number; limit: number }): Promise<PagedRows<AlertRow>> {
    const where: Sql[] = [scope.visibleClient('pr.client_id')];
    if (filter.open !== undefined)
      where.push(filter.open ? sql`a.resolved_at IS NULL` : sql`a.resolved_at IS NOT NULL`);
    if (filter.kind !== undefined && filter.kind.length > 0) where.push(sql`a.kind = ANY(${[...filter.kind]}::text[])`);
    if (filter.trackerId !== undefined) where.push(sql`a.tracker_id = ${filter.trackerId}`);
    if (filter.productionRunId !== undefined) where.push(sql`t.production_run_id = ${filter.productionRunId}`);
    return this.db.page<AlertRow>(
      { columns: COLUMNS, from: FROM, where, orderBy: sql`a.opened_at DESC, a.id DESC` },
      page,
    );
  }

  find(scope: AccessScope, id: string): Promise<AlertRow | null> {
    return this.db.first<AlertRow>(
      sql`SELECT ${COLUMNS} FROM ${FROM} WHERE a.id = ${id}::bigint AND ${scope.visibleClient('pr.client_id')}`,
    );
  }

  async trackerVisible(scope: AccessScope, trackerId: number): Promise<boolean> {
    const row = await this.db.first(
      sql`SELECT 1 FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
           WHERE t.id = ${trackerId} AND ${scope.visibleClient('pr.client_id')}`,
    );
    return row !== null;
  }

  /** Open alerts of a visible run's trackers per kind; null when the run is missing or invisible. */
  summary(scope: AccessScope, runId: number): Promise<AlertSummaryRow | null> {
    return this.db.first<AlertSummaryRow>(
      sql`SELECT coalesce(c.silent, 0)::int AS silent, coalesce(c.overdue, 0)::int AS overdue,
                 coalesce(c.battery_low, 0)::int AS battery_low
            FROM production_runs pr
            CROSS JOIN LATERAL (
              SELECT count(*) FILTER (WHERE a.kind = 'silent') AS silent,
                     count(*) FILTER (WHERE a.kind = 'overdue') AS overdue,
                     count(*) FILTER (WHERE a.kind = 'battery_low') AS battery_low
                FROM trackers t JOIN alerts a ON a.tracker_id = t.id AND a.resolved_at IS NULL
               WHERE t.production_run_id = pr.id
            ) c
           WHERE pr.id = ${runId} AND ${scope.visibleClient('pr.client_id')}`,
    );
  }
}
