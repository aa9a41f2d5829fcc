/**
 * Strict ISO 8601 parsing to epoch milliseconds: the one reading of every date input of the
 * service (bodies, queries, location reports). Without an offset a time means UTC. `Date.parse`
 * is not used because it reads offset-less times as local time and silently rolls impossible
 * dates over (2026-02-30 → 2026-03-02); here they are refused. Fractions beyond milliseconds are
 * truncated (the wire precision).
 *
 * The rule, everywhere: a real calendar date (leap years honoured), an optional time with hour
 * 0..23, minute and second 0..59, and an optional offset up to ±23:59; the year as written and
 * the instant in UTC both within 1970..9999. No surrounding blanks. A bare date means its
 * midnight UTC (location reports need a time).
 */
// A space in place of the offset sign is read as `+`: an unencoded `+` in a query string arrives
// as a space, and `…T14:05:00 01:00` has no other sensible meaning.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+\- ])(\d{2})(?::?(\d{2}))?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Earliest accepted year: earlier instants are treated as bad values (no tracker, run or report
 * predates the Unix epoch). The latest is 9999, the last year ISO 8601 writes with four digits.
 */
const MIN_YEAR = 1970;
const END_OF_YEAR_9999 = Date.UTC(10_000, 0, 1);

/** The one message for a date input that breaks the rule above. */
export const DATE_TIME_MESSAGE = `must be an ISO 8601 date-time (year ${MIN_YEAR} or later)`;

/** Date-times may be back-dated freely but not lie in the future by more than this. */
const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

export function isTooFarInFuture(date: Date | number, now = Date.now()): boolean {
  return (typeof date === 'number' ? date : date.getTime()) > now + FUTURE_TOLERANCE_MS;
}

/** parseIsoTimestamp as a Date, a bare date allowed (null when invalid). */
export function parseIsoDateTime(value: string): Date | null {
  const millis = parseIsoTimestamp(value, { allowDateOnly: true });
  return millis === null ? null : new Date(millis);
}

export function parseIsoTimestamp(value: unknown, options: { allowDateOnly?: boolean } = {}): number | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, fraction, , sign, ohs, oms] = m;
  if (hs === undefined && !options.allowDateOnly) return null;
  const year = +ys;
  const month = +mos;
  const day = +ds;
  if (year < MIN_YEAR || month < 1 || month > 12 || day < 1) return null;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > DAYS_IN_MONTH[month - 1] + (leap ? 1 : 0)) return null;
  const hour = hs === undefined ? 0 : +hs;
  const minute = mis === undefined ? 0 : +mis;
  const second = ss === undefined ? 0 : +ss;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const millis = fraction === undefined ? 0 : +fraction.slice(0, 3).padEnd(3, '0');
  let offsetMinutes = 0;
  if (sign !== undefined) {
    const oh = +ohs;
    const om = oms === undefined ? 0 : +oms;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const instant = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  // The range holds for the instant too: `1970-01-01T00:30+01:00` is still 1969 in UTC, and a
  // year past 9999 in UTC would not print in the output format.
  return instant >= 0 && instant < END_OF_YEAR_9999 ? instant : null;
}

const ZERO = 48;

/**
 * Fast path for the canonical form JavaScript itself produces (`2026-11-21T10:04:05.123Z`, what
 * trackers normally send): read by character codes, no regex, and the caller can keep the string
 * as it is. Returns null for anything else (use parseIsoTimestamp then).
 */
export function parseCanonicalUtc(value: string): number | null {
  if (value.length !== 24 || value.charCodeAt(23) !== 90 /* Z */ || value.charCodeAt(19) !== 46 /* . */) return null;
  if (
    value.charCodeAt(4) !== 45 ||
    value.charCodeAt(7) !== 45 ||
    value.charCodeAt(10) !== 84 ||
    value.charCodeAt(13) !== 58 ||
    value.charCodeAt(16) !== 58
  ) {
    return null;
  }
  let year = 0;
  for (let i = 0; i < 4; i++) year = year * 10 + digit(value, i);
  const month = digit(value, 5) * 10 + digit(value, 6);
  const day = digit(value, 8) * 10 + digit(value, 9);
  const hour = digit(value, 11) * 10 + digit(value, 12);
  const minute = digit(value, 14) * 10 + digit(value, 15);
  const second = digit(value, 17) * 10 + digit(value, 18);
  const millis = digit(value, 20) * 100 + digit(value, 21) * 10 + digit(value, 22);
  // digit() yields NaN for a non-digit, which fails every comparison below.
  if (!(
    year >= MIN_YEAR &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    millis >= 0
  ))
    return null;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > DAYS_IN_MONTH[month - 1] + (leap ? 1 : 0)) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second, millis);
}

function digit(value: string, index: number): number {
  const code = value.charCodeAt(index) - ZERO;
  return code >= 0 && code <= 9 ? code : NaN;
}
