import { DomainError } from '../common/errors/domain-error.js';
import { parseIsoTimestamp } from '../common/http/iso-timestamp.js';
import { DEVICE_ID_MESSAGE, isDeviceId } from '../tracker-states/device-id.js';
import type { DeviceReport } from './device-reports.service.js';
import { DEVICE_ERRORS } from './devices.errors.js';

/** A number below this is Unix seconds, at or above it milliseconds (10^11 s is the year 5138). */
const SECONDS_BELOW = 1e11;
const MAX_FUTURE_SKEW_MS = 5 * 60_000;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const UNSIGNED_DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;
/** An offset whose `+` arrived as a space (an unencoded `+` in a query string decodes to one). */
const OFFSET_AS_SPACE = /^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}(:?\d{2})?)$/;

/** The dialect's field names for the location-report fields, for the details of refused reports. */
export const OSMAND_FIELD_NAMES = {
  latitude: 'lat',
  longitude: 'lon',
  timestamp: 'timestamp',
  accuracy_m: 'accuracy',
  battery: 'batt',
} as const;

function invalid(detail: string): DomainError {
  return new DomainError(DEVICE_ERRORS.osmandInvalid(detail));
}

/**
 * One OsmAnd / Traccar Client report from its query or form fields: `id` (or `deviceid`), `lat`,
 * `lon`, `timestamp` (Unix seconds below 10^11, decimals allowed, else milliseconds, or ISO 8601;
 * absent: `now`), `accuracy`, `batt` (rounded). Other fields (speed, bearing, altitude, …) are
 * ignored. A missing or bad field throws the dialect's 400 naming it.
 */
export function osmandReport(fields: Record<string, unknown>, now: number): DeviceReport {
  const text = (name: string): string | undefined => {
    const value = fields[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalid(`${name}: must be given once, as a single value`);
    return value.trim() === '' ? undefined : value.trim();
  };
  const deviceId = text('id') ?? text('deviceid');
  if (deviceId === undefined) throw invalid('id: is required');
  if (!isDeviceId(deviceId)) throw invalid(`id: ${DEVICE_ID_MESSAGE}`);
  const number = (name: string, pattern: RegExp, min: number, max: number, message: string): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!pattern.test(value) || parsed < min || parsed > max) throw invalid(`${name}: ${message}`);
    return parsed;
  };
  const latitude = number('lat', DECIMAL, -90, 90, 'must be a number between -90 and 90');
  if (latitude === undefined) throw invalid('lat: is required');
  const longitude = number('lon', DECIMAL, -180, 180, 'must be a number between -180 and 180');
  if (longitude === undefined) throw invalid('lon: is required');
  const accuracy = number('accuracy', UNSIGNED_DECIMAL, 0, Number.MAX_VALUE, 'must be a number >= 0');
  const battery = number('batt', UNSIGNED_DECIMAL, 0, 100, 'must be a number between 0 and 100');
  const epochMs = osmandTime(text('timestamp'), now);
  const out: Record<string, unknown> = { timestamp: new Date(epochMs).toISOString(), latitude, longitude };
  if (accuracy !== undefined) out.accuracy_m = accuracy;
  if (battery !== undefined) out.battery = Math.round(battery);
  return { deviceId, fields: out };
}

function osmandTime(value: string | undefined, now: number): number {
  if (value === undefined) return now;
  let epochMs: number | null;
  if (UNSIGNED_DECIMAL.test(value)) {
    const n = Number(value);
    epochMs = Math.round(n < SECONDS_BELOW ? n * 1000 : n);
  } else {
    epochMs = parseIsoTimestamp(value.replace(OFFSET_AS_SPACE, '$1+$2'));
  }
  if (epochMs === null || !Number.isFinite(epochMs) || epochMs > 8.64e15)
    throw invalid('timestamp: must be Unix seconds, Unix milliseconds or an ISO 8601 date-time');
  if (epochMs > now + MAX_FUTURE_SKEW_MS) throw invalid('timestamp: must not be more than 5 minutes in the future');
  return epochMs;
}
