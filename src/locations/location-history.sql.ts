import { join, raw, sql, type Sql } from '../infrastructure/database/db.js';
import type { HistoryGranularity } from './locations.repository.js';

/**
 * SQL of one history page and its exact total, read from the aggregate tables directly.
 *
 * `auto` serves what the `location_history` view holds (hourly rows from the cutoff on, daily rows
 * before it) but not through the view: the planner sorts the view's UNION ALL as a whole, reading
 * every row of the tracker. Here each part is read in bucket order from its primary key, at most
 * skip + limit rows, and the two are merged. Both use the view's own `location_history_cutoff()`.
 */
export interface HistorySqlInput {
  granularity: HistoryGranularity;
  /** SQL expression of the tracker id (a column of the enclosing statement). */
  trackerId: Sql;
  /** Optional inclusive bounds on the bucket start. */
  start?: Date;
  end?: Date;
  direction: 'ASC' | 'DESC';
  limit: number;
  offset: number;
}

const HOURLY = raw('location_history_hourly');
const DAILY = raw('location_history_daily');
const CUTOFF = raw('location_history_cutoff()');
/** A bound as a timestamptz parameter (the cast keeps the parameter's type, so the plan). */
const ts = (value: Date): Sql => sql`${value.toISOString()}::timestamptz`;
/** UTC day of a timestamptz expression; '24 hours', not '1 day', which follows the session's DST. */
const dayOf = (value: Date): Sql => sql`date_trunc('day', ${ts(value)}, 'UTC')`;
const dayAfter = (value: Date): Sql => sql`${dayOf(value)} + interval '24 hours'`;
const limitOf = (input: HistorySqlInput): Sql => sql`${input.limit}::int`;
const offsetOf = (input: HistorySqlInput): Sql => sql`${input.offset}::int`;

function where(input: HistorySqlInput, extra: Sql[] = []): Sql {
  const conditions = [sql`b.tracker_id = ${input.trackerId}`, ...extra];
  if (input.start) conditions.push(sql`b.bucket >= ${ts(input.start)}`);
  if (input.end) conditions.push(sql`b.bucket <= ${ts(input.end)}`);
  return join(conditions, ' AND ');
}

function rows(input: HistorySqlInput, table: Sql, granularity: 'hourly' | 'daily', limit: Sql, extra: Sql[] = []): Sql {
  return sql`SELECT b.bucket, b.latitude, b.longitude, b.confidence, b.reported_at, ${raw(`'${granularity}'`)}::text AS granularity
            FROM ${table} b WHERE ${where(input, extra)}
           ORDER BY b.bucket ${raw(input.direction)} LIMIT ${limit}`;
}

const count = (input: HistorySqlInput, table: Sql, extra: Sql[] = []): Sql =>
  sql`(SELECT count(*) FROM ${table} b WHERE ${where(input, extra)})`;

/** The page: bucket, latitude, longitude, confidence, reported_at, granularity — in the requested order. */
export function historyPageSql(input: HistorySqlInput): Sql {
  if (input.granularity !== 'auto') {
    const table = input.granularity === 'hourly' ? HOURLY : DAILY;
    return sql`${rows(input, table, input.granularity, limitOf(input))} OFFSET ${offsetOf(input)}`;
  }
  const enough = sql`(${limitOf(input)}::bigint + ${offsetOf(input)})`;
  return sql`(${rows(input, HOURLY, 'hourly', enough, [sql`b.bucket >= ${CUTOFF}`])})
          UNION ALL
          (${rows(input, DAILY, 'daily', enough, [sql`b.bucket < ${CUTOFF}`])})
          ORDER BY bucket ${raw(input.direction)} LIMIT ${limitOf(input)} OFFSET ${offsetOf(input)}`;
}

/**
 * The exact number of points the filter selects (bigint). Hourly points are summed from the daily
 * rows' `hourly_buckets` (one entry per day instead of one per hour); a bound inside a day removes
 * that day's hours on the far side of it, counted from the hourly rows.
 */
export function historyTotalSql(input: HistorySqlInput): Sql {
  switch (input.granularity) {
    case 'daily':
      return count(input, DAILY);
    case 'auto':
      return sql`${count(input, HOURLY, [sql`b.bucket >= ${CUTOFF}`])} + ${count(input, DAILY, [sql`b.bucket < ${CUTOFF}`])}`;
    case 'hourly': {
      const days: Sql[] = [sql`d.tracker_id = ${input.trackerId}`];
      if (input.start) days.push(sql`d.bucket >= ${dayOf(input.start)}`);
      if (input.end) days.push(sql`d.bucket <= ${dayOf(input.end)}`);
      const parts = [sql`(SELECT coalesce(sum(d.hourly_buckets), 0) FROM ${DAILY} d WHERE ${join(days, ' AND ')})`];
      const hours = (range: Sql) =>
        sql`(SELECT count(*) FROM ${HOURLY} h WHERE h.tracker_id = ${input.trackerId} AND ${range})`;
      if (input.start) parts.push(hours(sql`h.bucket >= ${dayOf(input.start)} AND h.bucket < ${ts(input.start)}`));
      if (input.end) parts.push(hours(sql`h.bucket > ${ts(input.end)} AND h.bucket < ${dayAfter(input.end)}`));
      return join(parts, ' - ');
    }
  }
}
