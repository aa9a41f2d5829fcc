import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { ALERT_ERRORS } from './alerts.errors.js';
import { AlertsRepository, type AlertRow } from './alerts.repository.js';
import type { AlertDetails, AlertResponse, AlertSummaryResponse } from './dto/alert.response.js';
import type { ListAlertsQuery, TrackerAlertsQuery } from './dto/list-alerts.query.js';

/** Alerts as callers read them; opening and resolving them is AlertCheckService's and the writers'. */
@Injectable()
export class AlertsService {
  constructor(private readonly alerts: AlertsRepository) {}

  async list(scope: AccessScope, query: ListAlertsQuery): Promise<Page<AlertResponse>> {
    const { rows, total } = await this.alerts.list(
      scope,
      { open: query.open, kind: query.kind, trackerId: query.tracker_id, productionRunId: query.production_run_id },
      query,
    );
    return toPage(rows.map(toAlertResponse), total, query);
  }

  async get(scope: AccessScope, id: number): Promise<AlertResponse> {
    const row = await this.alerts.find(scope, String(id));
    if (row === null) throw new DomainError(ALERT_ERRORS.alertNotFound);
    return toAlertResponse(row);
  }

  async listForTracker(scope: AccessScope, trackerId: number, query: TrackerAlertsQuery): Promise<Page<AlertResponse>> {
    if (!(await this.alerts.trackerVisible(scope, trackerId))) throw new DomainError(TRACKER_ERRORS.trackerNotFound);
    const { rows, total } = await this.alerts.list(scope, { open: query.open, kind: query.kind, trackerId }, query);
    return toPage(rows.map(toAlertResponse), total, query);
  }

  async summary(scope: AccessScope, runId: number): Promise<AlertSummaryResponse> {
    const row = await this.alerts.summary(scope, runId);
    if (row === null) throw new DomainError(PRODUCTION_RUN_ERRORS.productionRunNotFound);
    return row;
  }
}

/** Wire shape of an alert (bigint ids as numbers: they stay far below 2^53). */
export function toAlertResponse(row: AlertRow): AlertResponse {
  return {
    id: Number(row.id),
    kind: row.kind,
    tracker_id: row.tracker_id,
    tracker_name: row.tracker_name,
    production_run_id: row.production_run_id,
    client_id: row.client_id,
    opened_at: new Date(row.opened_at).toISOString(),
    resolved_at: row.resolved_at === null ? null : new Date(row.resolved_at).toISOString(),
    details: row.details as unknown as AlertDetails,
  };
}
