import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TestApp } from './app.js';

export const OSMAND = '/api/v1/ingest/osmand';
export const OWNTRACKS = '/api/v1/ingest/owntracks';

/** A golden fixture of test/fixtures/device-protocols with `{{name}}` placeholders filled in. */
export function deviceFixture(name: string, values: Record<string, string> = {}): string {
  const text = readFileSync(resolve('test/fixtures/device-protocols', name), 'utf8').trim();
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    if (values[key] === undefined) throw new Error(`${name}: no value for {{${key}}}`);
    return values[key];
  });
}

let seq = 0;
/** A device id no other test of this process uses. */
export const uniqueDeviceId = (prefix = 'dev') => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

/** A tracker of run `runId` with the device id `deviceId` (made through the factories, set in SQL). */
export async function deviceTracker(t: TestApp, runId: number, deviceId = uniqueDeviceId()) {
  const tracker = await t.factories.tracker({ runId });
  await t.db.query('UPDATE trackers SET device_id = $1 WHERE id = $2', [deviceId, tracker.id]);
  return { id: tracker.id, deviceId };
}

export interface StoredReport {
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
  accuracy_m: number | null;
  battery: number | null;
  source: string | null;
}

/** The raw reports stored for a tracker, oldest first. */
export function storedReports(t: TestApp, trackerId: number): Promise<StoredReport[]> {
  return t.db.query(
    `SELECT to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp, latitude, longitude,
            confidence, accuracy_m, battery, source
       FROM location_reports WHERE tracker_id = $1 ORDER BY timestamp, id`,
    [trackerId],
  );
}
