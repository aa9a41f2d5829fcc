import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsDate } from 'class-validator';
import { DATE_TIME_MESSAGE, parseIsoDateTime } from './iso-timestamp.js';

/**
 * Body or query field holding an ISO 8601 date or date-time (without an offset it means UTC),
 * read by the service's one strict parser and delivered to the handler as a Date; anything else
 * is a 422 naming the field with DATE_TIME_MESSAGE. `null` is passed on untouched (a nullable
 * field uses it to clear its value; `@IsOptional()` decides whether it is allowed).
 */
export function IsoDateTime(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }) => (typeof value === 'string' ? (parseIsoDateTime(value) ?? value) : value)),
    IsDate({ message: DATE_TIME_MESSAGE }),
  );
}
