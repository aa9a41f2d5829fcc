import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';
import type { HistoryGranularity } from '../locations.repository.js';

export const GRANULARITIES: HistoryGranularity[] = ['auto', 'hourly', 'daily'];

/** Query of GET /trackers/{id}/location-history. */
export class LocationHistoryQuery extends PaginationQuery {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Inclusive lower bound on the bucket start. ISO 8601 date or date-time; without an offset it is UTC, e.g. `2026-11-01` or ' +
      '`2026-11-01T00:00:00Z`. Default: no lower bound.',
  })
  @IsOptional()
  @IsoDateTime()
  start_date?: Date;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Inclusive upper bound on the bucket start (a bare date means its midnight UTC), e.g. `2026-11-21T23:00:00Z`. Must not be ' +
      'before start_date. Default: no upper bound.',
  })
  @IsOptional()
  @IsoDateTime()
  end_date?: Date;

  @ApiPropertyOptional({
    enum: GRANULARITIES,
    default: 'auto',
    description:
      '`auto`: the combined history (hourly points from the start of today (UTC) minus HOURLY_HISTORY_DAYS on, daily points before); `hourly` / `daily`: that table only.',
  })
  @IsOptional()
  @IsIn(GRANULARITIES)
  granularity: HistoryGranularity = 'auto';

  @ApiPropertyOptional({ enum: ['desc', 'asc'], default: 'desc', description: 'By bucket start.' })
  @IsOptional()
  @IsIn(['desc', 'asc'])
  order: 'asc' | 'desc' = 'desc';
}
