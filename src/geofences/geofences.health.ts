import { Inject } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import {
  PipelineStepProvider,
  readOnlyStep,
  stepOutcome,
  type PipelineStepSource,
  type StepOutcome,
} from '../infrastructure/health/pipeline-step.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** Reports waiting longer than this for their geofence replay fail check_geofence_processing. */
const GEOFENCE_MAX_WAIT_SECONDS = 60;
/** The lag automation aims for; a longer wait is reported (`behind_lag_goal`) without failing the step. */
const GEOFENCE_LAG_GOAL_SECONDS = 2;
/** Queued geofence marks (tracker × row) check_geofence_processing reads at most, oldest first. */
export const GEOFENCE_BACKLOG_SCAN = 100_000;

interface GeofenceBacklogRow {
  waiting_trackers: number;
  overdue_trackers: number;
  oldest_wait_seconds: number;
  truncated: boolean;
}

/** check_geofence_processing: the queue of reports (and manual entries) waiting for their replay. */
@PipelineStepProvider()
export class GeofencesHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_geofence_processing: (scope: AccessScope) => this.geofenceProcessing(scope),
  };

  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A waiting mark is an eligible report (or manual entry) automation has not taken into account yet. */
  private async geofenceProcessing(scope: AccessScope): Promise<StepOutcome> {
    const enabled = this.config.geofenceEnabled;
    const row = await this.geofenceBacklog(scope, GEOFENCE_MAX_WAIT_SECONDS);
    return stepOutcome(
      {
        enabled,
        ...row,
        max_wait_seconds: GEOFENCE_MAX_WAIT_SECONDS,
        lag_goal_seconds: GEOFENCE_LAG_GOAL_SECONDS,
        behind_lag_goal: row.oldest_wait_seconds > GEOFENCE_LAG_GOAL_SECONDS,
      },
      enabled && row.overdue_trackers > 0
        ? [
            `${row.truncated ? 'At least ' : ''}${row.overdue_trackers} trackers have reports waiting more than ${GEOFENCE_MAX_WAIT_SECONDS} s for geofence processing`,
          ]
        : [],
    );
  }

  /**
   * Trackers waiting for a geofence replay and how long the oldest has waited (seconds; 0 when
   * none), counted over the GEOFENCE_BACKLOG_SCAN oldest queued marks: a backlog of millions of
   * marks (a large ingest) would otherwise take the step seconds. Marks are read oldest first, so
   * the oldest wait is always exact and the overdue ones are counted before any other; `truncated`
   * says that more marks wait beyond the scan (the counts are then lower bounds).
   */
  private geofenceBacklog(scope: AccessScope, olderThanSeconds: number): Promise<GeofenceBacklogRow> {
    return readOnlyStep(this.db, scope, () =>
      this.db.one<GeofenceBacklogRow>(
        sql`SELECT count(DISTINCT s.tracker_id)::int AS waiting_trackers,
                   count(DISTINCT s.tracker_id) FILTER (WHERE s.marked_at < now() - make_interval(secs => ${olderThanSeconds}))::int AS overdue_trackers,
                   coalesce(round(extract(epoch FROM now() - min(s.marked_at))::numeric, 1), 0)::float8 AS oldest_wait_seconds,
                   count(*) > ${GEOFENCE_BACKLOG_SCAN} AS truncated
              FROM (SELECT u.tracker_id, g.marked_at
                      FROM (SELECT marked_at, coalesce(trackers, ARRAY[tracker_id]) AS ids FROM geofence_pending ORDER BY marked_at) g
                      CROSS JOIN LATERAL unnest(g.ids) AS u(tracker_id)
                     LIMIT ${GEOFENCE_BACKLOG_SCAN + 1}) s`,
      ),
    );
  }
}
