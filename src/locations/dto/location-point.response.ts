import { ApiProperty } from '@nestjs/swagger';
import type { LocationPoint } from '../../location-reports/location-point.js';
import { COUNT_SCHEMA } from '../../common/openapi/schema-types.js';

/** OpenAPI shape of LocationPoint built by `toLocationPoint`. */
export class LocationPointResponse implements LocationPoint {
  @ApiProperty({
    format: 'date-time',
    description: 'Start of the UTC hour/day bucket.',
    example: '2026-11-21T10:00:00.000Z',
  })
  timestamp: string;

  @ApiProperty({ example: 52.52 }) latitude: number;
  @ApiProperty({ example: 13.405 }) longitude: number;
  @ApiProperty({ ...COUNT_SCHEMA, example: 3 }) confidence: number;

  @ApiProperty({
    format: 'date-time',
    description: "The winning report's own time.",
    example: '2026-11-21T10:42:13.000Z',
  })
  reported_at: string;

  @ApiProperty({ enum: ['hourly', 'daily'] }) granularity: 'hourly' | 'daily';
}
