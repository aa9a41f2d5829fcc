import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/** Largest PostgreSQL `integer`: every id column of the schema is int4 (serial). */
export const MAX_INT4 = 2_147_483_647;

/**
 * A positive int4 id in a body or query DTO (contract §0: ids are positive integers; anything
 * else is 422 naming the field). Query strings are converted to numbers first.
 */
export function PositiveId(options: { fromQuery?: boolean } = {}): PropertyDecorator {
  return applyDecorators(...(options.fromQuery ? [Type(() => Number)] : []), IsInt(), Min(1), Max(MAX_INT4));
}
