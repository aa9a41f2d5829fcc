import { ApiProperty } from '@nestjs/swagger';
import { timestampsOf, TimestampedResponse } from '../../common/http/timestamped.response.js';
import type { PlaceRow } from '../places.repository.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

/** Wire shape of a storage or delivery location (each module subclasses it for its OpenAPI name). */
export class PlaceResponse extends TimestampedResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) address: string | null;
  @ApiProperty({ type: Number, nullable: true }) latitude: number | null;
  @ApiProperty({ type: Number, nullable: true }) longitude: number | null;
  @ApiProperty({ type: 'integer', minimum: 10, maximum: 100000, description: 'Geofence radius in metres' })
  radius_m: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 0,
    maximum: 10080,
    description: 'Dwell before arrival counts; null: the configured default',
  })
  dwell_minutes: number | null;
}

export function toPlaceResponse(row: PlaceRow): PlaceResponse {
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    latitude: row.latitude === null ? null : Number(row.latitude),
    longitude: row.longitude === null ? null : Number(row.longitude),
    radius_m: row.radius_m,
    dwell_minutes: row.dwell_minutes,
    ...timestampsOf(row),
  };
}
