import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../../common/auth/access-scope.js';
import { Db, sql } from '../../infrastructure/database/db.js';
import { readOnlyStep } from './pipeline-checks.repository.js';

export interface MailBacklogRow {
  queued: number;
  overdue: number;
  oldest_overdue_seconds: number;
  failed_last_24h: number;
}

/** SQL of check_notification_delivery: the e-mail queue, read on its partial indexes. */
@Injectable()
export class NotificationChecksRepository {
  constructor(private readonly db: Db) {}

  mailBacklog(scope: AccessScope, overdueSeconds: number): Promise<MailBacklogRow> {
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
