import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { TRACKER_STATES, type TrackerStatus } from '../../tracker-states/tracker-status.js';

const TIMESTAMP = { type: String, example: '2026-11-21T10:00:00.000Z' } as const;

export class PointGeometry {
  @ApiProperty({ enum: ['Point'] }) type: 'Point';
  @ApiProperty({
    type: 'array',
    items: { type: 'number' },
    minItems: 2,
    maxItems: 2,
    description: '[longitude, latitude]',
    example: [13.405, 52.52],
  })
  coordinates: number[];
}

export class RunPositionProperties {
  @ApiProperty(ID_SCHEMA) tracker_id: number;
  @ApiProperty() tracker_name: string;
  @ApiProperty({ enum: TRACKER_STATES }) status: TrackerStatus;
  @ApiProperty({ ...TIMESTAMP, description: "The latest location's hourly bucket start (as LocationPoint.timestamp)" })
  timestamp: string;
  @ApiProperty({ ...TIMESTAMP, description: "The report's own time" }) reported_at: string;
  @ApiProperty({ type: String, nullable: true, description: 'The destination; null without one' })
  delivery_location_name: string | null;
}

export class RunPositionFeature {
  @ApiProperty({ enum: ['Feature'] }) type: 'Feature';
  @ApiProperty({ type: PointGeometry }) geometry: PointGeometry;
  @ApiProperty({ type: RunPositionProperties }) properties: RunPositionProperties;
}

/** GeoJSON FeatureCollection: one Point per visible tracker of the run that has a latest location. */
export class RunPositionsResponse {
  @ApiProperty({ enum: ['FeatureCollection'] }) type: 'FeatureCollection';
  @ApiProperty({ type: [RunPositionFeature] }) features: RunPositionFeature[];
}
