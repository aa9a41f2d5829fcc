import { ApiProperty } from '@nestjs/swagger';
import { isoUtc } from '../../common/http/timestamps.js';
import type { BrandRow } from '../brands.repository.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

export class BrandResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
  @ApiProperty(ID_SCHEMA) client_id: number;
  @ApiProperty({ example: '2026-11-21T10:04:05.123Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:04:05.123Z' }) updated_at: string;
}

export function toBrandResponse(row: BrandRow): BrandResponse {
  return {
    id: row.id,
    name: row.name,
    client_id: row.client_id,
    created_at: isoUtc(row.created_at) as string,
    updated_at: isoUtc(row.updated_at) as string,
  };
}
