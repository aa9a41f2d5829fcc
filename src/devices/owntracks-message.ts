import { RequestValidationException } from '../common/errors/validation.exception.js';
import type { DeviceReport } from './device-reports.service.js';

const MAX_FUTURE_SKEW_MS = 5 * 60_000;

/** The dialect's field names for the location-report fields, for the details of refused reports. */
export const OWNTRACKS_FIELD_NAMES = {
  latitude: 'lat',
  longitude: 'lon',
  timestamp: 'tst',
  accuracy_m: 'acc',
  battery: 'batt',
} as const;

/**
 * The report of an OwnTracks message, or null for a message of another `_type` (transition,
 * waypoint, card, …: acknowledged, nothing stored). A location needs `lat`, `lon` and `tst` (Unix
 * seconds); `acc` and `batt` are optional; every other field is ignored. A body that is not an
 * object, has no `_type`, or a location with missing or bad values throws a 422 naming the fields.
 */
export function owntracksReport(deviceId: string, body: unknown, now: number): DeviceReport | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw RequestValidationException.field('body', 'must be a JSON object');
  const message = body as Record<string, unknown>;
  if (typeof message._type !== 'string') throw RequestValidationException.field('_type', 'must be a string');
  if (message._type !== 'location') return null;
  const errors: { field: string; message: string }[] = [];
  const number = (name: string, min: number, max: number, text: string, required: boolean): number | undefined => {
    const value = message[name];
    if (value === undefined || value === null) {
      if (required) errors.push({ field: name, message: 'is required' });
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
      errors.push({ field: name, message: text });
      return undefined;
    }
    return value;
  };
  const latitude = number('lat', -90, 90, 'must be a number between -90 and 90', true);
  const longitude = number('lon', -180, 180, 'must be a number between -180 and 180', true);
  const tst = number(
    'tst',
    0,
    (now + MAX_FUTURE_SKEW_MS) / 1000,
    'must be Unix seconds, at most 5 minutes ahead',
    true,
  );
  const accuracy = number('acc', 0, Number.MAX_VALUE, 'must be a number >= 0', false);
  const battery = number('batt', 0, 100, 'must be an integer between 0 and 100', false);
  if (battery !== undefined && !Number.isInteger(battery))
    errors.push({ field: 'batt', message: 'must be an integer between 0 and 100' });
  if (errors.length > 0) throw new RequestValidationException(errors);
  const fields: Record<string, unknown> = {
    timestamp: new Date(Math.round((tst as number) * 1000)).toISOString(),
    latitude,
    longitude,
  };
  if (accuracy !== undefined) fields.accuracy_m = accuracy;
  if (battery !== undefined) fields.battery = battery;
  return { deviceId, fields };
}
