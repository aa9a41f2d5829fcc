import { ApiProperty } from '@nestjs/swagger';
import { timestampsOf, TimestampedResponse } from '../../common/http/timestamped.response.js';
import { isoUtc } from '../../common/http/timestamps.js';
import type { ProductionRunRow } from '../production-runs.repository.js';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';

export class ProductionRunResponse extends TimestampedResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() description: string;
  @ApiProperty(ID_SCHEMA) brand_id: number;
  @ApiProperty({ ...ID_SCHEMA, description: "The brand's client (read-only, follows the brand)." }) client_id: number;
  @ApiProperty({ type: String, nullable: true, example: '2026-03-01T00:00:00.000Z' }) start_date: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) end_date: string | null;
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 720,
    nullable: true,
    description:
      "Hours without a report or status entry after which a tracker's `silent` alert opens; null: the service default",
  })
  alert_silent_hours: number | null;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Number of trackers in the run.' }) tracker_count: number;
}

export function toProductionRunResponse(row: ProductionRunRow): ProductionRunResponse {
  return {
    id: row.id,
    description: row.description,
    brand_id: row.brand_id,
    client_id: row.client_id,
    start_date: isoUtc(row.start_date),
    end_date: isoUtc(row.end_date),
    alert_silent_hours: row.alert_silent_hours,
    tracker_count: Number(row.tracker_count),
    ...timestampsOf(row),
  };
}
