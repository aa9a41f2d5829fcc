import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';
import { alertConditions, type AlertThresholds } from './alert-conditions.sql.js';

/** pg advisory lock key of the alert check (any constant unique within the database). */
export const ALERT_CHECK_LOCK_KEY = 727_278;

/** Ids (as text: bigint) of the alerts one check opened and resolved. */
export interface CheckedAlerts {
  opened: string[];
  resolved: string[];
}

/**
 * The alert check's SQL. One transaction: the check's transaction-level advisory lock (so one
 * instance checks at a time; the others skip), one statement that resolves every open alert whose
 * condition no longer holds (including those of trackers that left IN_TRANSIT/IN_STORAGE) and
 * opens one per condition without an open alert, then the events of both. The partial unique index
 * keeps one open alert per (tracker, kind) whatever runs concurrently.
 */
@Injectable()
export class AlertCheckRepository {
  constructor(private readonly db: Db) {}

  /** Null when another check holds the lock. */
  check(thresholds: AlertThresholds): Promise<CheckedAlerts | null> {
    return this.db.transaction(async () => {
      const lock = await this.db.one<{ locked: boolean }>(
        sql`SELECT pg_try_advisory_xact_lock(${ALERT_CHECK_LOCK_KEY}) AS locked`,
      );
      if (!lock.locked) return null;
      const checked = await this.db.one<CheckedAlerts>(
        sql`WITH ${alertConditions(thresholds)},
            resolved AS (
              UPDATE alerts a SET resolved_at = now()
               WHERE a.resolved_at IS NULL
                 AND NOT EXISTS (SELECT 1 FROM conditions c WHERE c.tracker_id = a.tracker_id AND c.kind = a.kind)
              RETURNING a.id
            ),
            opened AS (
              INSERT INTO alerts (kind, tracker_id, details)
              SELECT c.kind, c.tracker_id, c.details FROM conditions c
               WHERE NOT EXISTS (SELECT 1 FROM alerts a WHERE a.tracker_id = c.tracker_id AND a.kind = c.kind AND a.resolved_at IS NULL)
               ORDER BY c.tracker_id, c.kind
              ON CONFLICT (tracker_id, kind) WHERE resolved_at IS NULL DO NOTHING
              RETURNING id
            )
            SELECT (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM resolved) AS resolved,
                   (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM opened) AS opened`,
      );
      // Resolutions first: a stream shows a tracker's old alert ending before anything new begins.
      if (checked.resolved.length > 0) await this.events(checked.resolved, 'tracker.alert_resolved');
      if (checked.opened.length > 0) await this.events(checked.opened, 'tracker.alert_opened');
      return checked;
    });
  }

  private events(ids: readonly string[], type: 'tracker.alert_opened' | 'tracker.alert_resolved'): Promise<number> {
    return this.db.execute(sql`SELECT alert_events(${[...ids]}::bigint[], ${type})`);
  }
}
