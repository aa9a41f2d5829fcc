import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MAX_REPORTS_PER_BATCH } from '../report-batch.js';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';

/*
 * OpenAPI documentation of the report bodies. The routes validate the items by hand (report-batch.ts),
 * each on its own, so one bad report never fails its batch; these classes only describe the wire shape.
 */

/** A report on the tracker route (`POST /trackers/{id}/locations`): the tracker comes from the path. */
export class TrackerLocationReportDto {
  @ApiProperty({
    format: 'date-time',
    description: 'ISO 8601; without an offset it is UTC. At most 5 minutes in the future.',
    example: '2026-11-21T10:42:13Z',
  })
  timestamp: string;

  @ApiProperty({ minimum: -90, maximum: 90, example: 52.52 }) latitude: number;
  @ApiProperty({ minimum: -180, maximum: 180, example: 13.405 }) longitude: number;

  @ApiProperty({ ...COUNT_SCHEMA, description: 'Integer; reports below 2 are stored but not aggregated.', example: 3 })
  confidence: number;

  @ApiPropertyOptional({ type: Number, minimum: 0, nullable: true, example: 12.5 }) accuracy_m?: number | null;
  @ApiPropertyOptional({ type: String, maxLength: 64, nullable: true, example: 'gps' }) source?: string | null;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 100,
    nullable: true,
    example: 87,
    description: "The device's battery level in percent, stored as reported (low-battery alerts read the newest one)",
  })
  battery?: number | null;
}

export class LocationReportDto extends TrackerLocationReportDto {
  @ApiProperty({ ...ID_SCHEMA, example: 1 }) tracker_id: number;
}

export class LocationReportBatchDto {
  @ApiProperty({ type: [LocationReportDto], minItems: 1, maxItems: MAX_REPORTS_PER_BATCH })
  reports: LocationReportDto[];
}

export class TrackerLocationReportBatchDto {
  @ApiProperty({ type: [TrackerLocationReportDto], minItems: 1, maxItems: MAX_REPORTS_PER_BATCH })
  reports: TrackerLocationReportDto[];
}
