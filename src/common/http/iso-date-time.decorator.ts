import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsDate } from 'class-validator';
import { parseIsoDateTime } from './iso-timestamp.js';

/**
 * Body or query field holding an ISO 8601 date-time (contract §0: without an offset it means UTC),
 * delivered to the handler as a Date; anything else is a 422 naming the field.
 */
export function IsoDateTime(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }) => (typeof value === 'string' ? (parseIsoDateTime(value) ?? value) : value)),
    IsDate({ message: 'must be an ISO 8601 date-time' }),
  );
}
