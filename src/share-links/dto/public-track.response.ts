import { ApiProperty } from '@nestjs/swagger';
import { ArrivalEstimateResponse } from '../../arrival-estimates/dto/arrival-estimate.response.js';
import { TRACKER_STATES, type TrackerStatus } from '../../tracker-states/tracker-status.js';

const TIMESTAMP = { type: String, example: '2026-11-21T10:04:05.123Z' } as const;

export class PublicStatusEntry {
  @ApiProperty({ enum: TRACKER_STATES }) status: TrackerStatus;
  @ApiProperty(TIMESTAMP) timestamp: string;
  @ApiProperty({ type: String, nullable: true, description: 'The storage or delivery location; null without one' })
  location_name: string | null;
}

export class PublicLocation {
  @ApiProperty({ type: 'number', minimum: -90, maximum: 90 }) latitude: number;
  @ApiProperty({ type: 'number', minimum: -180, maximum: 180 }) longitude: number;
  @ApiProperty({ ...TIMESTAMP, description: "The report's own time" }) timestamp: string;
}

/** What a share link shows: never ids, client, brand, run, notes, users or raw reports. */
export class PublicTrackResponse {
  @ApiProperty() tracker_name: string;
  @ApiProperty({ enum: TRACKER_STATES }) status: TrackerStatus;
  @ApiProperty({ type: String, nullable: true }) destination_name: string | null;
  @ApiProperty({ type: [PublicStatusEntry], description: 'Ascending' }) status_history: PublicStatusEntry[];
  @ApiProperty({
    type: PublicLocation,
    nullable: true,
    description: '`approximate` links round to 2 decimals; `none` links: always null',
  })
  latest_location: PublicLocation | null;
  @ApiProperty({ type: ArrivalEstimateResponse, nullable: true }) eta: ArrivalEstimateResponse | null;
  @ApiProperty(TIMESTAMP) expires_at: string;
}
