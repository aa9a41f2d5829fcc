import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';

/**
 * Query booleans accept true/false/1/0 in any case. Anything else is kept as a
 * string so `@IsBoolean()` rejects it with 422.
 */
export function QueryBoolean(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value === 'boolean') return value;
    if (typeof value !== 'string') return value;
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    return value;
  });
}

/**
 * Comma-separated list (`?id=1,2,3` or repeated `?id=1&id=2`) into a string array, each item as
 * sent (blanks and empty items are kept for the item validator to refuse). An empty parameter
 * (`?id=`) is an empty list.
 */
export function QueryList(): PropertyDecorator {
  return Transform(({ value }) => {
    const values = (Array.isArray(value) ? value : [value]).map(String);
    return values.length === 1 && values[0] === '' ? [] : values.flatMap((v) => v.split(','));
  });
}

// Plain ASCII digits, as for ids: `1e3`, `0x10`, `1.0`, `+5`, ` 5` and `05` are not integers here.
const INT_TEXT = /^(?:0|[1-9][0-9]{0,9})$/;

/** A query integer in plain digits into a number; anything else stays text for the validator to reject. */
export function QueryInt(): PropertyDecorator {
  return Transform(({ value }) => (typeof value === 'string' && INT_TEXT.test(value) ? Number(value) : value));
}

/** An integer in min..max, with one message naming the range (not one per failed bound). */
export function IsIntInRange(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'isIntInRange',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
      defaultMessage: () => `must be an integer from ${min} to ${max}`,
    },
  });
}
