import { ApiProperty } from '@nestjs/swagger';
import type { IngestResult } from '../location-ingestion.service.js';
import { COUNT_SCHEMA } from '../../common/openapi/schema-types.js';

export class RejectedReportResponse {
  @ApiProperty({ ...COUNT_SCHEMA, description: "0-based position in the request's list." }) index: number;
  @ApiProperty({ example: 'latitude: must be a number between -90 and 90' }) detail: string;
}

/** Ingest counters: accepted + duplicates + rejected = reports sent. */
export class IngestResultResponse implements IngestResult {
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Newly stored reports, eligible or not.' }) accepted: number;
  @ApiProperty({
    ...COUNT_SCHEMA,
    description:
      'Same (tracker_id, timestamp, latitude, longitude) as a stored report or an earlier one in the request; nothing changed.',
  })
  duplicates: number;
  @ApiProperty({ type: [RejectedReportResponse] }) rejected: RejectedReportResponse[];
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Accepted reports that are eligible for the hourly/daily history.' })
  aggregated: number;
  @ApiProperty({
    ...COUNT_SCHEMA,
    description: 'Accepted reports with confidence below 2 (wins over the region filter).',
  })
  filtered_low_confidence: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Accepted reports inside the manufacturing-region box.' })
  filtered_manufacturing_region: number;
}
