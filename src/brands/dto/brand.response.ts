import { ApiProperty } from '@nestjs/swagger';
import { timestampsOf, TimestampedResponse } from '../../common/http/timestamped.response.js';
import type { BrandRow } from '../brands.repository.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

export class BrandResponse extends TimestampedResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
  @ApiProperty(ID_SCHEMA) client_id: number;
}

export function toBrandResponse(row: BrandRow): BrandResponse {
  return {
    id: row.id,
    name: row.name,
    client_id: row.client_id,
    ...timestampsOf(row),
  };
}
