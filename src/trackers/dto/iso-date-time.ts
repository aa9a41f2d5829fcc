import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsDate } from 'class-validator';

/** Date-times may be back-dated freely but not lie in the future by more than this (contract §4). */
export const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses an ISO 8601 date or date-time. Without an offset it means UTC (contract §0) — JavaScript
 * would read it as local time, so the offset is added explicitly. Returns null when invalid.
 */
export function parseIsoDateTime(value: string): Date | null {
  const match = ISO_DATE_TIME.exec(value.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, , offset] = match;
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > 31) return null;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59)) return null;
  let text = value.trim().replace(' ', 'T');
  if (hour === undefined) text = `${year}-${month}-${day}T00:00:00`;
  if (!offset) text += 'Z';
  else if (/^[+-]\d{2}$/.test(offset)) text += ':00';
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // Reject roll-overs such as 2026-02-30 (Date would silently move them into March).
  if (hour === undefined && date.getUTCDate() !== Number(day)) return null;
  return date;
}

/** Body/query field holding an ISO 8601 date-time, delivered to the handler as a Date. */
export function IsoDateTime(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }) => (typeof value === 'string' ? (parseIsoDateTime(value) ?? value) : value)),
    IsDate({ message: 'must be an ISO 8601 date-time' }),
  );
}

export function isTooFarInFuture(date: Date, now = Date.now()): boolean {
  return date.getTime() > now + FUTURE_TOLERANCE_MS;
}
