import { Transform } from 'class-transformer';

// YYYY-MM-DD, optionally followed by a time (T or space) and an offset (Z, ±HH:MM, ±HHMM, ±HH).
// A space in place of the offset sign is read as `+`: an unencoded `+` in a query string arrives
// as a space, and `…T14:05:00 01:00` has no other sensible meaning.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+\- ])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * Parses an ISO 8601 date or date-time (contract §0: without an offset it means UTC).
 * Returns null for anything else, including impossible dates such as 2026-02-30.
 */
export function parseIsoDateTime(value: string): Date | null {
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', , sign, oh = '0', om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59 || Number(oh) > 23 || Number(om) > 59) return null;
  const millis = Number(frac.padEnd(3, '0').slice(0, 3));
  const offsetMinutes = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  // setUTCFullYear, not Date.UTC: the latter maps years 0..99 to 1900..1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  date.setTime(date.getTime() - offsetMinutes * 60_000);
  return Number.isNaN(date.getTime()) ? null : date;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Query transform: a valid ISO date-time becomes a Date; anything else stays as is for @IsDate to reject. */
export function QueryDateTime(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    return parseIsoDateTime(value) ?? value;
  });
}
