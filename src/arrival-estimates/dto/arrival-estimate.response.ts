import { ApiProperty } from '@nestjs/swagger';

export class ArrivalEstimateResponse {
  @ApiProperty({
    format: 'date-time',
    description: 'Journey start + the median duration of the longer comparable journeys',
  })
  expected_at: string;
  @ApiProperty({ format: 'date-time', description: 'Journey start + their 80th percentile' })
  latest_at: string;
  @ApiProperty({
    enum: ['destination', 'all'],
    description: "Journeys to this tracker's destination, or all of the client's when fewer than 5 of those are longer",
  })
  basis: 'destination' | 'all';
  @ApiProperty({ type: 'integer', minimum: 5, description: 'How many journey durations the percentiles used' })
  sample_size: number;
}
