import { isDeviceId } from '../tracker-states/device-id.js';

/**
 * Why a message stored nothing, or not everything it held (the label of the bad-message counter).
 * `unstorable`: the database refused its reports with a data error (the rest of its batch was stored).
 */
export const BAD_MESSAGE_REASONS = [
  'too_large',
  'not_json',
  'not_reports',
  'bad_topic',
  'unknown_device',
  'invalid_reports',
  'unstorable',
] as const;
export type BadMessageReason = (typeof BAD_MESSAGE_REASONS)[number];

/** A message holds one report object or a list of 1..10 000 (the size of one ingest batch). */
export const MAX_REPORTS_PER_MESSAGE = 10_000;

/** Where the device id sits in the topics of a subscription: the `+` level of its filter. */
export class DeviceTopic {
  private readonly levels: string[];
  private readonly deviceLevel: number;

  constructor(filter: string) {
    this.levels = filter.split('/');
    this.deviceLevel = this.levels.indexOf('+');
  }

  /** The device id of a topic the filter matched, or null when that level is not a device id. */
  deviceId(topic: string): string | null {
    const levels = topic.split('/');
    if (levels.length !== this.levels.length) return null;
    const deviceId = levels[this.deviceLevel];
    return isDeviceId(deviceId) ? deviceId : null;
  }
}

export type ParsedMessage = { kind: 'reports'; reports: unknown[] } | { kind: 'bad'; reason: BadMessageReason };

/**
 * The reports of a message's payload: a JSON report object or a non-empty list of them. Each
 * report is judged later, on its own, by the location ingest; here only the payload's shape.
 */
export function parsePayload(payload: Buffer, maxBytes: number): ParsedMessage {
  if (payload.length > maxBytes) return { kind: 'bad', reason: 'too_large' };
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return { kind: 'bad', reason: 'not_json' };
  }
  if (Array.isArray(value)) {
    if (value.length === 0 || value.length > MAX_REPORTS_PER_MESSAGE) return { kind: 'bad', reason: 'not_reports' };
    return { kind: 'reports', reports: value };
  }
  if (typeof value !== 'object' || value === null) return { kind: 'bad', reason: 'not_reports' };
  return { kind: 'reports', reports: [value] };
}
