import { RequestValidationException } from '../common/errors/validation.exception.js';
import { DATE_TIME_MESSAGE, parseCanonicalUtc, parseIsoTimestamp } from '../common/http/iso-timestamp.js';
import { MAX_INT4 } from '../common/int4.js';

/** A batch holds 1..10 000 reports. */
export const MAX_REPORTS_PER_BATCH = 10_000;
/** A full batch with every field at its longest is about 2.3 MB of JSON; the rest is room for whitespace. */
export const MAX_BATCH_BODY_BYTES = 4 * 1024 * 1024;
/** A report more than this far in the future is rejected (clock skew allowance). */
const MAX_FUTURE_SKEW_MS = 5 * 60_000;

const MAX_SOURCE_LENGTH = 64;

export interface RejectedReport {
  index: number;
  detail: string;
}

/**
 * The valid reports of a request as parallel columns (ready for `UNNEST`), plus the rejected ones.
 * `index` keeps each valid report's 0-based position in the request.
 */
export interface ReportColumns {
  index: number[];
  trackerId: number[];
  /** Normalised ISO 8601 UTC (millisecond precision). */
  timestamp: string[];
  /** The same instants, epoch milliseconds. */
  epochMs: number[];
  latitude: number[];
  longitude: number[];
  confidence: number[];
  accuracyM: (number | null)[];
  source: (string | null)[];
  /** Battery level in percent (0..100), or null when the report has none. */
  battery: (number | null)[];
  rejected: RejectedReport[];
}

/**
 * The list of report items in a request body. Only the body's shape is judged here (a malformed
 * body → 422); the items are judged one by one by `parseReports`.
 * `singleAllowed`: the tracker route also takes one bare report object.
 */
export function reportItems(body: unknown, singleAllowed: boolean): unknown[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw RequestValidationException.field(
      'body',
      singleAllowed ? 'must be a report object or {"reports": [...]}' : 'must be an object {"reports": [...]}',
    );
  }
  const record = body as Record<string, unknown>;
  if (!('reports' in record)) {
    if (singleAllowed) return [body];
    throw RequestValidationException.field('reports', 'is required');
  }
  for (const key in record) {
    if (key !== 'reports') throw RequestValidationException.field(key, 'property should not exist');
  }
  const reports = record.reports;
  if (!Array.isArray(reports)) throw RequestValidationException.field('reports', 'must be an array');
  if (reports.length < 1 || reports.length > MAX_REPORTS_PER_BATCH) {
    throw RequestValidationException.field('reports', `must contain between 1 and ${MAX_REPORTS_PER_BATCH} reports`);
  }
  return reports;
}

/**
 * Judges every item on its own: a bad value rejects that item only, with a detail in
 * the `field: message` form of the validation errors. Hand-written rather than class-validator
 * because it runs for every report of 10 000-report batches; it allocates nothing per valid item
 * beyond the column entries.
 *
 * `pathTrackerId`: the tracker route, where items carry no tracker_id (or the same one).
 */
export function parseReports(
  items: readonly unknown[],
  options: { now: number; pathTrackerId?: number },
): ReportColumns {
  const out: ReportColumns = {
    index: [],
    trackerId: [],
    timestamp: [],
    epochMs: [],
    latitude: [],
    longitude: [],
    confidence: [],
    accuracyM: [],
    source: [],
    battery: [],
    rejected: [],
  };
  const latestAllowed = options.now + MAX_FUTURE_SKEW_MS;
  const pathTrackerId = options.pathTrackerId;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      out.rejected.push({ index: i, detail: 'report: must be an object' });
      continue;
    }
    const r = item as Record<string, unknown>;
    const problems: string[] = [];
    for (const key in r) {
      if (!KNOWN_FIELDS.has(key)) problems.push(`${key}: property should not exist`);
    }

    let trackerId = r.tracker_id;
    if (pathTrackerId === undefined) {
      if (!isInt(trackerId) || trackerId < 1 || trackerId > MAX_INT4)
        problems.push('tracker_id: must be a positive integer');
    } else if (trackerId === undefined || trackerId === null) {
      trackerId = pathTrackerId;
    } else if (trackerId !== pathTrackerId) {
      problems.push('tracker_id: must be omitted or equal the tracker in the path');
    }

    // Canonical UTC strings are passed on as sent; other forms are normalised below.
    const rawTimestamp = r.timestamp;
    const canonicalMs = typeof rawTimestamp === 'string' ? parseCanonicalUtc(rawTimestamp) : null;
    const epochMs = canonicalMs ?? parseIsoTimestamp(rawTimestamp);
    if (epochMs === null) problems.push(`timestamp: ${DATE_TIME_MESSAGE}`);
    else if (epochMs > latestAllowed) problems.push('timestamp: must not be more than 5 minutes in the future');

    const latitude = r.latitude;
    if (!isFiniteNumber(latitude) || latitude < -90 || latitude > 90)
      problems.push('latitude: must be a number between -90 and 90');
    const longitude = r.longitude;
    if (!isFiniteNumber(longitude) || longitude < -180 || longitude > 180)
      problems.push('longitude: must be a number between -180 and 180');
    const confidence = r.confidence;
    if (!isInt(confidence) || confidence < 0 || confidence > MAX_INT4)
      problems.push('confidence: must be an integer >= 0');

    const accuracy = r.accuracy_m ?? null;
    if (accuracy !== null && (!isFiniteNumber(accuracy) || accuracy < 0))
      problems.push('accuracy_m: must be a number >= 0');
    const source = r.source ?? null;
    if (
      source !== null &&
      (typeof source !== 'string' || source.length > MAX_SOURCE_LENGTH || source.includes('\u0000'))
    ) {
      problems.push(`source: must be a string of at most ${MAX_SOURCE_LENGTH} characters`);
    }

    const battery = r.battery ?? null;
    if (battery !== null && (!isInt(battery) || battery < 0 || battery > 100))
      problems.push('battery: must be an integer between 0 and 100');

    if (problems.length > 0) {
      out.rejected.push({ index: i, detail: problems.join('; ') });
      continue;
    }
    out.index.push(i);
    out.trackerId.push(trackerId as number);
    const stored = canonicalMs === null ? new Date(epochMs as number) : null;
    out.timestamp.push(stored === null ? (rawTimestamp as string) : stored.toISOString());
    out.epochMs.push(stored === null ? (canonicalMs as number) : stored.getTime());
    out.latitude.push(latitude as number);
    out.longitude.push(longitude as number);
    out.confidence.push(confidence as number);
    out.accuracyM.push(accuracy as number | null);
    out.source.push(source as string | null);
    out.battery.push(battery as number | null);
  }
  return out;
}

const KNOWN_FIELDS = new Set([
  'tracker_id',
  'timestamp',
  'latitude',
  'longitude',
  'confidence',
  'accuracy_m',
  'source',
  'battery',
]);

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}
