import { ApiProperty } from '@nestjs/swagger';
import { timestampsOf, TimestampedResponse } from '../../common/http/timestamped.response.js';
import type { ClientRow } from '../clients.repository.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

export class ClientResponse extends TimestampedResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
}

export function toClientResponse(row: ClientRow): ClientResponse {
  return {
    id: row.id,
    name: row.name,
    ...timestampsOf(row),
  };
}
