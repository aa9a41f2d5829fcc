import type { TestApp } from './app.js';

export const HOUR = 3_600_000;
export const ALERTS = '/api/v1/alerts';

/** An alert as the API answers it. */
export interface Alert {
  id: number;
  kind: string;
  tracker_id: number;
  tracker_name: string;
  production_run_id: number;
  client_id: number;
  opened_at: string;
  resolved_at: string | null;
  details: Record<string, unknown>;
}

/** Linear interpolation between closest ranks, as PostgreSQL's percentile_cont. */
export function percentileCont(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

let seq = 0;

/**
 * A tracker of `runId` with entries `[status, ms before now, delivery location?]` written directly
 * (back-dated), following its latest entry. `now` fixes the instant they are dated from, so journey
 * durations are exact.
 */
export async function backdatedTracker(
  t: TestApp,
  runId: number,
  entries: [string, number, number?][],
  options: { destination?: number; now?: number } = {},
): Promise<number> {
  const now = options.now ?? Date.now();
  const [{ id }] = (await t.db.query(
    `INSERT INTO trackers (name, production_run_id, delivery_location_id) VALUES ($1, $2, $3) RETURNING id`,
    [`alert-${process.pid}-${++seq}`, runId, options.destination ?? null],
  )) as { id: number }[];
  for (const [status, ago, delivery] of entries)
    await t.db.query(
      `INSERT INTO tracker_status_history (tracker_id, status, timestamp, delivery_location_id) VALUES ($1, $2, $3, $4)`,
      [id, status, new Date(now - ago), delivery ?? null],
    );
  await t.db.query('SELECT trackers_follow_latest_entry(ARRAY[$1]::int[])', [id]);
  return id;
}
