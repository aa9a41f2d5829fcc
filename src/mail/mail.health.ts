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

/** E-mails still unsent this long after their window ended fail check_notification_delivery. */
const MAIL_MAX_DELAY_SECONDS = 15 * 60;

interface MailBacklogRow {
  queued: number;
  overdue: number;
  oldest_overdue_seconds: number;
  failed_last_24h: number;
}

/** check_notification_delivery: the e-mail queue, read on its partial indexes. */
@PipelineStepProvider()
export class MailHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_notification_delivery: (scope: AccessScope) => this.notificationDelivery(scope),
  };

  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Skipped (passing) without SMTP_URL: nothing is queued then. */
  private async notificationDelivery(scope: AccessScope): Promise<StepOutcome> {
    if (this.config.mail.smtpUrl === undefined)
      return stepOutcome({ skipped: true, reason: 'SMTP_URL is not set: e-mail is off' });
    const row = await this.mailBacklog(scope, MAIL_MAX_DELAY_SECONDS);
    return stepOutcome(
      { skipped: false, ...row, max_delay_seconds: MAIL_MAX_DELAY_SECONDS },
      row.overdue > 0
        ? [
            `${row.overdue} e-mails are unsent more than ${MAIL_MAX_DELAY_SECONDS / 60} minutes after their digest window ended`,
          ]
        : [],
    );
  }

  private mailBacklog(scope: AccessScope, overdueSeconds: number): Promise<MailBacklogRow> {
    return readOnlyStep(this.db, scope, () =>
      this.db.one<MailBacklogRow>(
        sql`SELECT (SELECT count(*) FROM mail_digests WHERE state = 'queued')::int AS queued,
                   q.overdue, q.oldest_overdue_seconds,
                   (SELECT count(*) FROM mail_digests WHERE state = 'failed' AND finished_at > now() - interval '24 hours')::int AS failed_last_24h
              FROM (SELECT count(*)::int AS overdue,
                           coalesce(round(extract(epoch FROM now() - min(window_end))::numeric, 1), 0)::float8 AS oldest_overdue_seconds
                      FROM mail_digests
                     WHERE state = 'queued' AND window_end < now() - make_interval(secs => ${overdueSeconds})) q`,
      ),
    );
  }
}
