import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { PaginationQuery } from '../../common/http/pagination.js';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';
import { PositiveId } from '../../common/http/id-field.js';
import { MultilineText } from '../../common/http/text-input.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { Trim } from '../../common/http/text-fields.js';
import { OptionalIdField } from '../../common/http/optional-id-field.js';

/** Optional, nullable silence threshold of the run's trackers: whole hours 1..720 (null: the service default). */
function AlertSilentHoursField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: 720,
      nullable: true,
      description:
        "Hours without a report or status entry after which a tracker's `silent` alert opens; null: the default",
    }),
    ValidateIf((_: object, value: unknown) => value !== undefined && value !== null),
    IsInt(),
    Min(1),
    Max(720),
  );
}

export class CreateProductionRunDto {
  @ApiPropertyOptional({ maxLength: 1000, default: '', example: 'Spring 2026 batch' })
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(1000)
  @MultilineText()
  description?: string;

  @ApiProperty({
    ...ID_SCHEMA,
    description: "The run's brand; its client becomes the run's client_id. An unknown brand is 422.",
  })
  @PositiveId()
  brand_id: number;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'ISO 8601; without an offset it means UTC.',
  })
  @IsOptional()
  @IsoDateTime()
  start_date?: Date | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'ISO 8601, not before start_date (else 422).',
  })
  @IsOptional()
  @IsoDateTime()
  end_date?: Date | null;

  @AlertSilentHoursField()
  alert_silent_hours?: number | null;
}

/**
 * PUT body: every field optional (partial update). `start_date`/`end_date` may be null to clear
 * them; the others may not. client_id is not accepted: it always follows the brand.
 */
export class UpdateProductionRunDto {
  @ApiPropertyOptional({ maxLength: 1000 })
  @ValidateIf((_, value) => value !== undefined)
  @Trim()
  @IsString()
  @MaxLength(1000)
  @MultilineText()
  description?: string;

  @ApiPropertyOptional({
    ...ID_SCHEMA,
    description: "Moving a run to another brand moves it (and its trackers) to that brand's client.",
  })
  @ValidateIf((_, value) => value !== undefined)
  @PositiveId()
  brand_id?: number;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  @IsOptional()
  @IsoDateTime()
  start_date?: Date | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Not before the (new or stored) start_date, else 422.',
  })
  @IsOptional()
  @IsoDateTime()
  end_date?: Date | null;

  @AlertSilentHoursField()
  alert_silent_hours?: number | null;
}

export class ListProductionRunsQuery extends PaginationQuery {
  @OptionalIdField({}, { fromQuery: true })
  brand_id?: number;

  @OptionalIdField({}, { fromQuery: true })
  client_id?: number;
}
