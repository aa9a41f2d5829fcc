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
  /** SQL expressions: the tracker id, and the optional inclusive bounds on the bucket start. */
  trackerId: string;
  start?: string;
  end?: string;
  direction: 'ASC' | 'DESC';
  limit: string;
  offset: string;
}

const HOURLY = 'location_history_hourly';
const DAILY = 'location_history_daily';
const CUTOFF = 'location_history_cutoff()';
/** UTC day of a timestamptz expression; '24 hours', not '1 day', which follows the session's DST. */
const dayOf = (ts: string) => `date_trunc('day', ${ts}, 'UTC')`;
const dayAfter = (ts: string) => `${dayOf(ts)} + interval '24 hours'`;

function where(input: HistorySqlInput, extra: string[] = []): string {
  const conditions = [`b.tracker_id = ${input.trackerId}`, ...extra];
  if (input.start) conditions.push(`b.bucket >= ${input.start}`);
  if (input.end) conditions.push(`b.bucket <= ${input.end}`);
  return conditions.join(' AND ');
}

function rows(input: HistorySqlInput, table: string, granularity: 'hourly' | 'daily', limit: string, extra: string[] = []): string {
  return `SELECT b.bucket, b.latitude, b.longitude, b.confidence, b.reported_at, '${granularity}'::text AS granularity
            FROM ${table} b WHERE ${where(input, extra)}
           ORDER BY b.bucket ${input.direction} LIMIT ${limit}`;
}

const count = (input: HistorySqlInput, table: string, extra: string[] = []) => `(SELECT count(*) FROM ${table} b WHERE ${where(input, extra)})`;

/** The page: bucket, latitude, longitude, confidence, reported_at, granularity — in the requested order. */
export function historyPageSql(input: HistorySqlInput): string {
  if (input.granularity !== 'auto') {
    const table = input.granularity === 'hourly' ? HOURLY : DAILY;
    return `${rows(input, table, input.granularity, input.limit)} OFFSET ${input.offset}`;
  }
  const enough = `(${input.limit}::bigint + ${input.offset})`;
  return `(${rows(input, HOURLY, 'hourly', enough, [`b.bucket >= ${CUTOFF}`])})
          UNION ALL
          (${rows(input, DAILY, 'daily', enough, [`b.bucket < ${CUTOFF}`])})
          ORDER BY bucket ${input.direction} LIMIT ${input.limit} OFFSET ${input.offset}`;
}

/**
 * The exact number of points the filter selects (bigint). Hourly points are summed from the daily
 * rows' `hourly_buckets` (one entry per day instead of one per hour); a bound inside a day removes
 * that day's hours on the far side of it, counted from the hourly rows.
 */
export function historyTotalSql(input: HistorySqlInput): string {
  switch (input.granularity) {
    case 'daily':
      return count(input, DAILY);
    case 'auto':
      return `${count(input, HOURLY, [`b.bucket >= ${CUTOFF}`])} + ${count(input, DAILY, [`b.bucket < ${CUTOFF}`])}`;
    case 'hourly': {
      const days: string[] = [`d.tracker_id = ${input.trackerId}`];
      if (input.start) days.push(`d.bucket >= ${dayOf(input.start)}`);
      if (input.end) days.push(`d.bucket <= ${dayOf(input.end)}`);
      const parts = [`(SELECT coalesce(sum(d.hourly_buckets), 0) FROM ${DAILY} d WHERE ${days.join(' AND ')})`];
      const hours = (range: string) => `(SELECT count(*) FROM ${HOURLY} h WHERE h.tracker_id = ${input.trackerId} AND ${range})`;
      if (input.start) parts.push(hours(`h.bucket >= ${dayOf(input.start)} AND h.bucket < ${input.start}`));
      if (input.end) parts.push(hours(`h.bucket > ${input.end} AND h.bucket < ${dayAfter(input.end)}`));
      return parts.join(' - ');
    }
  }
}
