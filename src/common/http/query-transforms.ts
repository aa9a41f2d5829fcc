import { Transform } from 'class-transformer';

/**
 * Query booleans accept true/false/1/0 in any case (contract §0). Anything else is kept as a
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

/** Comma-separated list (`?id=1,2,3` or repeated `?id=1&id=2`) into a trimmed string array. */
export function QueryList(): PropertyDecorator {
  return Transform(({ value }) => {
    const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
    return parts.map((p) => p.trim()).filter((p) => p !== '');
  });
}
