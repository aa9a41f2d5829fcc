import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';
import { intArray, nullableTextArrayParam } from '../infrastructure/database/pg-arrays.js';
import { alertConditions, wireTime, type AlertThresholds } from './alert-conditions.sql.js';

/** pg advisory lock key of the alert check (any constant unique within the database). */
export const ALERT_CHECK_LOCK_KEY = 727_278;

/** Ids (as text: bigint) of the alerts one check opened and resolved. */
export interface CheckedAlerts {
  opened: string[];
  resolved: string[];
}

/** `silent` and `battery_low` conditions seen by the check's snapshot, without an open alert. */
interface Candidates {
  tracker_ids: number[];
  kinds: string[];
}

/**
 * The alert check's SQL, in two transactions.
 *
 * The first takes the check's transaction-level advisory lock (so one instance checks at a time; the
 * others skip) and runs one statement that resolves every open alert whose condition no longer holds
 * (including those of trackers that left IN_TRANSIT/IN_STORAGE), opens the `overdue` alerts, and
 * names the `silent` and `battery_low` conditions without an open alert; then the events.
 *
 * Those two kinds depend on reports, and a report committed after that statement began is invisible
 * to it, while its ingest could not resolve an alert not yet committed. So they open in a second
 * transaction, which holds no other lock while it waits: it upserts the candidates' activity rows
 * (an empty one for a tracker without reports), which waits for any batch writing them and answers
 * their latest versions, and opens only what still holds on those. A batch that commits first is
 * seen; one that comes later waits for the rows, and its report_activity_resolve() (a snapshot of its
 * own, after the wait) sees the committed alert and resolves it. The partial unique index keeps one
 * open alert per (tracker, kind) whatever runs concurrently.
 */
@Injectable()
export class AlertCheckRepository {
  constructor(private readonly db: Db) {}

  /** Null when another check holds the lock. */
  async check(thresholds: AlertThresholds): Promise<CheckedAlerts | null> {
    const first = await this.resolveAndOpenOverdue(thresholds);
    if (first === null) return null;
    const { candidates, ...checked } = first;
    if (candidates.tracker_ids.length === 0) return checked;
    const opened = await this.openHeld(candidates, thresholds);
    return { resolved: checked.resolved, opened: [...checked.opened, ...opened] };
  }

  private resolveAndOpenOverdue(
    thresholds: AlertThresholds,
  ): Promise<(CheckedAlerts & { candidates: Candidates }) | null> {
    return this.db.transaction(async () => {
      const lock = await this.db.one<{ locked: boolean }>(
        sql`SELECT pg_try_advisory_xact_lock(${ALERT_CHECK_LOCK_KEY}) AS locked`,
      );
      if (!lock.locked) return null;
      const row = await this.db.one<CheckedAlerts & Candidates>(
        sql`WITH ${alertConditions(thresholds)},
            resolved AS (
              UPDATE alerts a SET resolved_at = now()
               WHERE a.resolved_at IS NULL
                 AND NOT EXISTS (SELECT 1 FROM conditions c WHERE c.tracker_id = a.tracker_id AND c.kind = a.kind)
              RETURNING a.id
            ),
            unopened AS (
              SELECT c.kind, c.tracker_id, c.details FROM conditions c
               WHERE NOT EXISTS (SELECT 1 FROM alerts a WHERE a.tracker_id = c.tracker_id AND a.kind = c.kind AND a.resolved_at IS NULL)
            ),
            opened AS (
              INSERT INTO alerts (kind, tracker_id, details)
              SELECT kind, tracker_id, details FROM unopened WHERE kind = 'overdue' ORDER BY tracker_id
              ON CONFLICT (tracker_id, kind) WHERE resolved_at IS NULL DO NOTHING
              RETURNING id
            )
            SELECT (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM resolved) AS resolved,
                   (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM opened) AS opened,
                   coalesce(array_agg(u.tracker_id ORDER BY u.tracker_id, u.kind), '{}') AS tracker_ids,
                   coalesce(array_agg(u.kind ORDER BY u.tracker_id, u.kind), '{}') AS kinds
              FROM unopened u WHERE u.kind <> 'overdue'`,
      );
      // Resolutions first: a stream shows a tracker's old alert ending before anything new begins.
      if (row.resolved.length > 0) await this.events(row.resolved, 'tracker.alert_resolved');
      if (row.opened.length > 0) await this.events(row.opened, 'tracker.alert_opened');
      return {
        resolved: row.resolved,
        opened: row.opened,
        candidates: { tracker_ids: row.tracker_ids, kinds: row.kinds },
      };
    });
  }

  /**
   * Opens the candidates whose condition still holds on their activity rows' latest versions, with
   * the rows held until the commit (see the class). The empty row of a tracker deleted meanwhile is
   * left behind, read by nothing (tracker ids are never reused).
   */
  private openHeld(candidates: Candidates, t: AlertThresholds): Promise<string[]> {
    return this.db.transaction(async () => {
      const { opened } = await this.db.one<{ opened: string[] }>(
        sql`WITH candidates AS (
              SELECT * FROM unnest(${intArray(candidates.tracker_ids)}, ${nullableTextArrayParam(candidates.kinds)}) AS c(tracker_id, kind)
            ),
            held AS (
              INSERT INTO tracker_report_activity AS cur (tracker_id)
              SELECT DISTINCT c.tracker_id FROM candidates c JOIN trackers t ON t.id = c.tracker_id ORDER BY c.tracker_id
              ON CONFLICT (tracker_id) DO UPDATE SET last_report_at = cur.last_report_at
              RETURNING cur.tracker_id, cur.last_report_at, cur.battery, cur.battery_at
            ),
            still AS (
              SELECT c.tracker_id, c.kind,
                     CASE c.kind
                       WHEN 'silent' THEN jsonb_build_object('last_report_at', ${wireTime('h.last_report_at')}, 'threshold_hours', x.hours)
                       ELSE jsonb_build_object('battery', h.battery, 'reported_at', ${wireTime('h.battery_at')})
                     END AS details
                FROM candidates c
                JOIN held h ON h.tracker_id = c.tracker_id
                JOIN trackers tr ON tr.id = c.tracker_id AND tr.status IN ('IN_TRANSIT', 'IN_STORAGE')
                JOIN production_runs pr ON pr.id = tr.production_run_id
                LEFT JOIN tracker_journey_facts f ON f.tracker_id = c.tracker_id
                CROSS JOIN LATERAL (SELECT coalesce(pr.alert_silent_hours, ${t.silentHours}::int) AS hours) x
               WHERE (c.kind = 'silent' AND greatest(h.last_report_at, f.last_at) < now() - make_interval(hours => x.hours))
                  OR (c.kind = 'battery_low' AND h.battery <= ${t.batteryPercent}::int)
            ),
            opened AS (
              INSERT INTO alerts (kind, tracker_id, details)
              SELECT kind, tracker_id, details FROM still ORDER BY tracker_id, kind
              ON CONFLICT (tracker_id, kind) WHERE resolved_at IS NULL DO NOTHING
              RETURNING id
            )
            SELECT coalesce(array_agg(id::text ORDER BY id), '{}') AS opened FROM opened`,
      );
      if (opened.length > 0) await this.events(opened, 'tracker.alert_opened');
      return opened;
    });
  }

  private events(ids: readonly string[], type: 'tracker.alert_opened' | 'tracker.alert_resolved'): Promise<number> {
    return this.db.execute(sql`SELECT alert_events(${[...ids]}::bigint[], ${type})`);
  }
}
