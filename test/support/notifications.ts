import type { TestApp } from './app.js';

/** The events the database recorded for a tracker, oldest first, as stored. */
export async function eventsOf(t: TestApp, trackerId: number): Promise<Record<string, unknown>[]> {
  return t.db.query(
    `SELECT id::int, type, tracker_id, tracker_name, production_run_id, client_id, from_status, to_status, source,
            status_entry_id::int, storage_location_id, delivery_location_id, occurred_at, created_at
       FROM notification_events WHERE tracker_id = $1 ORDER BY id`,
    [trackerId],
  );
}

/** from → to of each event of a tracker, oldest first. */
export async function transitions(t: TestApp, trackerId: number): Promise<string[]> {
  return (await eventsOf(t, trackerId)).map((e) => `${e.from_status}>${e.to_status}`);
}
