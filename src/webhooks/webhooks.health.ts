import type { AccessScope } from '../common/auth/access-scope.js';
import {
  PipelineStepProvider,
  readOnlyStep,
  stepOutcome,
  type PipelineStepSource,
  type StepOutcome,
} from '../infrastructure/health/pipeline-step.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** Pending deliveries this long past their next_attempt_at fail check_webhook_delivery. */
const MAX_DELAY_SECONDS = 15 * 60;

interface DeliveryBacklogRow {
  pending: number;
  overdue: number;
  oldest_overdue_seconds: number;
  waiting_on_disabled: number;
  failed_last_24h: number;
  disabled_webhooks: number;
}

/**
 * check_webhook_delivery: no delivery of an enabled webhook (with an active owner) is pending more
 * than 15 minutes past its next_attempt_at. Deliveries of disabled webhooks wait on purpose and are
 * only counted.
 */
@PipelineStepProvider()
export class WebhooksHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_webhook_delivery: (scope: AccessScope) => this.webhookDelivery(scope),
  };

  constructor(private readonly db: Db) {}

  private async webhookDelivery(scope: AccessScope): Promise<StepOutcome> {
    const row = await readOnlyStep(this.db, scope, () =>
      this.db.one<DeliveryBacklogRow>(
        sql`WITH pending AS (
              SELECT d.next_attempt_at, (w.is_active OR d.manual_retry) AND u.is_active AS sendable
                FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN users u ON u.id = w.user_id
               WHERE d.status = 'pending')
            SELECT count(*) FILTER (WHERE sendable)::int AS pending,
                   count(*) FILTER (WHERE sendable AND next_attempt_at < now() - make_interval(secs => ${MAX_DELAY_SECONDS}))::int AS overdue,
                   coalesce(round(extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE sendable
                     AND next_attempt_at < now() - make_interval(secs => ${MAX_DELAY_SECONDS})))::numeric, 1), 0)::float8 AS oldest_overdue_seconds,
                   count(*) FILTER (WHERE NOT sendable)::int AS waiting_on_disabled,
                   (SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND finished_at > now() - interval '24 hours')::int AS failed_last_24h,
                   (SELECT count(*) FROM webhooks WHERE NOT is_active)::int AS disabled_webhooks
              FROM pending`,
      ),
    );
    return stepOutcome(
      { ...row, max_delay_seconds: MAX_DELAY_SECONDS },
      row.overdue > 0
        ? [
            `${row.overdue} webhook deliveries are pending more than ${MAX_DELAY_SECONDS / 60} minutes past their due time`,
          ]
        : [],
    );
  }
}
