import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { ID_SCHEMA } from '../openapi/schema-types.js';
import { PositiveId } from './id-field.js';

/**
 * An optional id in a body or query, documented as an int4 id (plus `doc`). Left out or null, it
 * passes (a nullable body field clears its value with null); anything else must be a PositiveId.
 */
export function OptionalIdField(
  doc: ApiPropertyOptions = {},
  options: { fromQuery?: boolean } = {},
): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ ...ID_SCHEMA, ...doc } as ApiPropertyOptions),
    IsOptional(),
    PositiveId(options),
  );
}
