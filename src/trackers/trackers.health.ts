import type { AccessScope } from '../common/auth/access-scope.js';
import {
  PipelineStepProvider,
  readOnlyStep,
  stepOutcome,
  type PipelineStepSource,
  type StepOutcome,
} from '../infrastructure/health/pipeline-step.js';
import { Db, sql } from '../infrastructure/database/db.js';

/** Trackers compared with their latest status entry, per source of the sample: fixed, whatever the table size. */
const STATUS_SAMPLE_TRACKERS = 500;

interface StatusConsistencyRow {
  sampled_trackers: number;
  without_history: number;
  mismatched: number;
  examples: { tracker_id: number; status: string; latest_entry_status: string }[] | null;
}

/** check_status_consistency: each sampled tracker's status against its latest status entry. */
@PipelineStepProvider()
export class TrackersHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_status_consistency: (scope: AccessScope) => this.statusConsistency(scope),
  };

  constructor(private readonly db: Db) {}

  private async statusConsistency(scope: AccessScope): Promise<StepOutcome> {
    const row = await this.sampleStatuses(scope, STATUS_SAMPLE_TRACKERS);
    return stepOutcome(
      {
        sampled_trackers: row.sampled_trackers,
        trackers_without_history: row.without_history,
        mismatched: row.mismatched,
        examples: row.examples ?? [],
      },
      row.mismatched > 0
        ? [
            `${row.mismatched} of ${row.sampled_trackers} sampled trackers have a status different from their latest status entry`,
          ]
        : [],
    );
  }

  /**
   * Trackers most likely to have changed (newest updated, newest status entries, newest created),
   * each compared with its latest (timestamp, id) status entry — one probe per tracker on
   * tracker_status_history (tracker_id, timestamp DESC, id DESC).
   */
  private async sampleStatuses(scope: AccessScope, sampleSize: number): Promise<StatusConsistencyRow> {
    return readOnlyStep(this.db, scope, async () => {
      const row = await this.db.one<StatusConsistencyRow>(
        sql`WITH sample AS (
           (SELECT id FROM trackers ORDER BY updated_at DESC, id DESC LIMIT ${sampleSize})
           UNION
           (SELECT tracker_id FROM (SELECT tracker_id FROM tracker_status_history ORDER BY id DESC LIMIT ${sampleSize}) newest_entries)
           UNION
           (SELECT id FROM trackers ORDER BY id DESC LIMIT ${sampleSize})
         ),
         compared AS (
           SELECT t.id, t.status, latest.status AS latest_entry_status
             FROM sample s
             JOIN LATERAL (SELECT id, status FROM trackers WHERE id = s.id LIMIT 1) t ON TRUE
             LEFT JOIN LATERAL (
               SELECT h.status FROM tracker_status_history h
                WHERE h.tracker_id = t.id
                ORDER BY h.timestamp DESC, h.id DESC
                LIMIT 1
             ) latest ON TRUE
         )
         SELECT count(*)::int AS sampled_trackers,
                count(*) FILTER (WHERE latest_entry_status IS NULL)::int AS without_history,
                count(*) FILTER (WHERE status <> latest_entry_status)::int AS mismatched,
                (jsonb_agg(jsonb_build_object('tracker_id', id, 'status', status, 'latest_entry_status', latest_entry_status)
                           ORDER BY id) FILTER (WHERE status <> latest_entry_status)) AS examples
           FROM compared`,
      );
      return { ...row, examples: row.examples?.slice(0, 5) ?? null };
    });
  }
}
