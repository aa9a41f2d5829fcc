import { Transform } from 'class-transformer';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * ISO 8601 input (contract §0): a date or date-time; without an offset it means UTC (JavaScript
 * alone would read a zone-less date-time as local time). Anything unparsable → null.
 */
export function parseInputTimestamp(value: string): Date | null {
  const match = ISO_DATE_TIME.exec(value.trim());
  if (!match) return null;
  let text = value.trim().replace(' ', 'T');
  if (text.includes('T') && !match[1]) text += 'Z';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * Turns an ISO string into a Date for `@IsDate()`; null stays null (clears a nullable field),
 * anything unparsable is kept as is so validation rejects it.
 */
export function InputTimestamp(): PropertyDecorator {
  return Transform(({ value }) => (typeof value === 'string' ? (parseInputTimestamp(value) ?? value) : value));
}
