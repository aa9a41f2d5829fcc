import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { COUNT_SCHEMA, ID_SCHEMA } from '../common/openapi/schema-types.js';
import { IsBoolean, IsOptional } from 'class-validator';
import { PaginationQuery } from '../common/http/pagination.js';
import { QueryBoolean } from '../common/http/query-transforms.js';
import { isoUtc } from '../common/http/timestamps.js';
import type { VisitRow } from './visits.repository.js';

/** Query of the three visit lists. */
export class ListVisitsQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: 'Only confirmed (true) or unconfirmed (false) visits' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  confirmed?: boolean;

  @ApiPropertyOptional({ description: 'Only open (true) or closed (false) visits' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  open?: boolean;
}

/** A tracker's stay at a storage or delivery location, as its reports show it. */
export class VisitResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty(ID_SCHEMA) tracker_id: number;
  @ApiProperty({ enum: ['storage', 'delivery'] }) location_type: 'storage' | 'delivery';
  @ApiProperty(ID_SCHEMA) location_id: number;
  @ApiProperty() location_name: string;
  @ApiProperty({ description: 'Time of the first report inside' }) entered_at: string;
  @ApiProperty({ description: 'Time of the latest report inside' }) last_seen_at: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Time of the report that ended the visit; null while open',
  })
  exited_at: string | null;
  @ApiProperty({ description: 'last_seen_at − entered_at in minutes, 2 decimals' }) duration_minutes: number;
  @ApiProperty(COUNT_SCHEMA) report_count: number;
  @ApiProperty({ description: "Seen inside for at least the location's dwell time" }) confirmed: boolean;
}

export function toVisitResponse(row: VisitRow): VisitResponse {
  return {
    id: Number(row.id),
    tracker_id: row.tracker_id,
    location_type: row.storage_location_id !== null ? 'storage' : 'delivery',
    location_id: (row.storage_location_id ?? row.delivery_location_id) as number,
    location_name: row.location_name,
    entered_at: isoUtc(row.entered_at) as string,
    last_seen_at: isoUtc(row.last_seen_at) as string,
    exited_at: isoUtc(row.exited_at),
    duration_minutes: Number(row.duration_minutes),
    report_count: row.report_count,
    confirmed: row.confirmed,
  };
}
