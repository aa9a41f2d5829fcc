import { Controller, Get, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { ALERT_ERRORS } from './alerts.errors.js';
import { AlertsService } from './alerts.service.js';
import {
  AlertResponse,
  AlertSummaryResponse,
  BatteryLowAlertDetails,
  OverdueAlertDetails,
  SilentAlertDetails,
} from './dto/alert.response.js';
import { ListAlertsQuery, TrackerAlertsQuery } from './dto/list-alerts.query.js';

const BAD_QUERY = { ...ERRORS.validationFailed, summary: 'Bad open, kind, id filter or pagination value' };

/**
 * Alerts of the trackers the caller can see (scoped like trackers): silent, overdue and
 * low-battery conditions of trackers in transit or in storage, each with its opening and resolution.
 */
@ApiTags('alerts')
@ApiExtraModels(SilentAlertDetails, OverdueAlertDetails, BatteryLowAlertDetails)
@Controller()
export class AlertsController {
  constructor(private readonly alerts: AlertsService) {}

  @Get('alerts')
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'Alerts, newest opened first',
    description: 'An invisible tracker or production run in a filter gives an empty page, as for trackers.',
  })
  @ApiOkResponse({ type: PageOf(AlertResponse) })
  @ApiErrors(BAD_QUERY)
  list(@CurrentScope() scope: AccessScope, @Query() query: ListAlertsQuery): Promise<Page<AlertResponse>> {
    return this.alerts.list(scope, query);
  }

  @Get('alerts/:id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'One alert' })
  @ApiOkResponse({ type: AlertResponse })
  @ApiErrors(ALERT_ERRORS.alertNotFound)
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<AlertResponse> {
    return this.alerts.get(scope, id);
  }

  @Get('trackers/:id/alerts')
  @Access('admin', 'user')
  @ApiOperation({ summary: "A tracker's alerts, newest opened first" })
  @ApiOkResponse({ type: PageOf(AlertResponse) })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound, BAD_QUERY)
  listForTracker(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: TrackerAlertsQuery,
  ): Promise<Page<AlertResponse>> {
    return this.alerts.listForTracker(scope, id, query);
  }

  @Get('production-runs/:id/alerts/summary')
  @Access('admin', 'user')
  @ApiOperation({ summary: "Open alerts of a production run's trackers, per kind" })
  @ApiOkResponse({ type: AlertSummaryResponse })
  @ApiErrors(PRODUCTION_RUN_ERRORS.productionRunNotFound)
  summary(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<AlertSummaryResponse> {
    return this.alerts.summary(scope, id);
  }
}
