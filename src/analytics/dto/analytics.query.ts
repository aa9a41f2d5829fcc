import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { CSV_DATE_FORMATS, type CsvDateFormat } from '../../common/csv/csv.js';
import { QueryBoolean } from '../../common/http/query-transforms.js';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';

/** Query of every analytics endpoint. */
export class AnalyticsQuery {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Evaluate the history as of this instant (ISO 8601; without an offset it means UTC). Only status entries with ' +
      'timestamp <= as_of count and as_of ends every open interval, e.g. `2026-03-01T14:05:00Z`. Default: now.',
  })
  @IsOptional()
  @IsoDateTime()
  as_of?: Date;
}

export class AnalyticsCsvQuery extends AnalyticsQuery {
  @ApiPropertyOptional({ type: Boolean, default: true, description: 'Append the Aggregate Summary section.' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean({ message: 'must be a boolean (true, false, 1 or 0)' })
  include_aggregate_summary: boolean = true;

  @ApiPropertyOptional({
    type: Boolean,
    default: true,
    description: 'Append the Delivery Location Performance section.',
  })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean({ message: 'must be a boolean (true, false, 1 or 0)' })
  include_delivery_performance: boolean = true;

  @ApiPropertyOptional({
    enum: CSV_DATE_FORMATS,
    default: 'ISO',
    description:
      'ISO → 2026-03-01T14:05:00Z, US → 03/01/2026 14:05:00, EU → 01/03/2026 14:05:00 (UTC). Case-insensitive.',
  })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toUpperCase() : value))
  @IsIn(CSV_DATE_FORMATS, { message: `must be one of ${CSV_DATE_FORMATS.join(', ')}` })
  date_format: CsvDateFormat = 'ISO';
}
