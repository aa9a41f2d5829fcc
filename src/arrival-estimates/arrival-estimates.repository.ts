import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, sql } from '../infrastructure/database/db.js';
import { journeyStart } from './journey-start.sql.js';

/** Comparable journeys count only when delivered this recently. */
export const COMPARABLE_DAYS = 180;
/** Fewer longer journeys than this on a basis: that basis gives no estimate. */
export const MINIMUM_SAMPLE = 5;

export interface ArrivalEstimateRow {
  expected_at: Date;
  latest_at: Date;
  basis: 'destination' | 'all';
  sample_size: number;
}

/**
 * The arrival estimate of one tracker, in one statement: its journey's start and elapsed time, the
 * durations of the comparable journeys of its own client (current status DELIVERED, delivered within
 * the last 180 days, with a start) that are longer than the elapsed time, and their p50/p80 by
 * linear interpolation (percentile_cont) — over the journeys to its destination when at least five
 * are longer, else over all of the client's. Other clients' journeys are never read.
 */
@Injectable()
export class ArrivalEstimatesRepository {
  constructor(private readonly db: Db) {}

  find(scope: AccessScope, trackerId: number): Promise<ArrivalEstimateRow | null> {
    return this.db.first<ArrivalEstimateRow>(
      sql`WITH me AS (
            SELECT t.delivery_location_id AS destination, pr.client_id, s.start,
                   extract(epoch FROM now() - s.start) AS elapsed
              FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
              ${journeyStart('t.id', 's', true)}
             WHERE t.id = ${trackerId} AND t.status IN ('IN_TRANSIT', 'IN_STORAGE')
               AND t.delivery_location_id IS NOT NULL AND ${scope.visibleClient('pr.client_id')}
          ), longer AS (
            SELECT extract(epoch FROM d.at - cs.start) AS seconds, d.delivery_location_id = me.destination AS same
              FROM me
              JOIN production_runs cpr ON cpr.client_id = me.client_id
              JOIN trackers c ON c.production_run_id = cpr.id AND c.status = 'DELIVERED'
              JOIN LATERAL (
                SELECT h.timestamp AS at, h.status, h.delivery_location_id FROM tracker_status_history h
                 WHERE h.tracker_id = c.id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1
              ) d ON d.status = 'DELIVERED' AND d.at >= now() - make_interval(days => ${COMPARABLE_DAYS})
              ${journeyStart('c.id', 'cs', true)}
             WHERE extract(epoch FROM d.at - cs.start) > me.elapsed
          ), stats AS (
            SELECT count(*) FILTER (WHERE same) AS destination_n,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) FILTER (WHERE same) AS destination_p50,
                   percentile_cont(0.8) WITHIN GROUP (ORDER BY seconds) FILTER (WHERE same) AS destination_p80,
                   count(*) AS all_n,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS all_p50,
                   percentile_cont(0.8) WITHIN GROUP (ORDER BY seconds) AS all_p80
              FROM longer
          ), chosen AS (
            SELECT CASE WHEN destination_n >= ${MINIMUM_SAMPLE} THEN 'destination' ELSE 'all' END AS basis,
                   CASE WHEN destination_n >= ${MINIMUM_SAMPLE} THEN destination_n ELSE all_n END AS n,
                   CASE WHEN destination_n >= ${MINIMUM_SAMPLE} THEN destination_p50 ELSE all_p50 END AS p50,
                   CASE WHEN destination_n >= ${MINIMUM_SAMPLE} THEN destination_p80 ELSE all_p80 END AS p80
              FROM stats
          )
          SELECT me.start + make_interval(secs => chosen.p50) AS expected_at,
                 me.start + make_interval(secs => chosen.p80) AS latest_at,
                 chosen.basis, chosen.n::int AS sample_size
            FROM me, chosen
           WHERE chosen.n >= ${MINIMUM_SAMPLE}`,
    );
  }
}
