import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';
import { MAX_INT4 } from '../int4.js';

/** The one message for a bad id, wherever it arrives (path, query, body). */
export const ID_MESSAGE = 'must be a positive integer';

// Plain ASCII digits without a sign, leading zero, blank, exponent or fraction: `0x10`, `1e3`,
// `1.0`, `+1`, ` 1` and `01` are not ids, even though `Number()` reads each of them as one.
const ID_TEXT = /^[1-9][0-9]{0,9}$/;

/** An id written as text (path and query): its value, or null when it is not strictly one. */
export function parseIdText(value: unknown): number | null {
  if (typeof value !== 'string' || !ID_TEXT.test(value)) return null;
  const id = Number(value);
  return id <= MAX_INT4 ? id : null;
}

/** An id as a JSON value: an integer number in 1..MAX_INT4 (a string of digits is not one). */
function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_INT4;
}

/**
 * A positive int4 id in a body or query DTO; anything else is 422 naming the field with
 * ID_MESSAGE (`each`: every item of an array). A query value is read with parseIdText (text that is not strictly an id stays text
 * and fails); a body value must already be a JSON integer.
 */
export function PositiveId(options: { fromQuery?: boolean; each?: boolean } = {}): PropertyDecorator {
  return applyDecorators(
    ...(options.fromQuery ? [Transform(({ value }) => parseIdText(value) ?? value)] : []),
    ValidateBy(
      { name: 'positiveId', validator: { validate: isId, defaultMessage: () => ID_MESSAGE } },
      { each: options.each },
    ),
  );
}
