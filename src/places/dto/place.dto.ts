import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNumber, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { MultilineText } from '../../common/http/text-input.js';
import { NameField } from '../../common/http/text-fields.js';

/**
 * Bodies and queries shared by storage and delivery locations (both kinds have the same fields
 * and rules). Each kind subclasses them so OpenAPI names the schemas after the resource.
 */
const FINITE = { allowNaN: false, allowInfinity: false };

/** Geofence radius in metres, 10..100 000; may be left out but never null. */
function RadiusField(doc: { default?: number } = {}): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 10,
      maximum: 100000,
      ...doc,
      description: 'Geofence radius in metres',
      example: 400,
    }),
    ValidateIf((_: object, value: unknown) => value !== undefined),
    IsInt(),
    Min(10),
    Max(100000),
  );
}

/** Dwell in minutes, 0..10 080, or null for the configured default. */
function DwellField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      nullable: true,
      minimum: 0,
      maximum: 10080,
      description: 'Minutes a tracker must be seen inside before it counts as arrived; null: GEOFENCE_DWELL_MINUTES',
    }),
    IsOptional(),
    IsInt(),
    Min(0),
    Max(10080),
  );
}

export class CreatePlaceDto {
  @NameField({ example: 'Rotterdam Hub' })
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1000, example: 'Maasvlakte 1, Rotterdam' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  @MultilineText()
  address?: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: -90, maximum: 90, example: 51.95 })
  @IsOptional()
  @IsNumber(FINITE)
  @Min(-90)
  @Max(90)
  latitude?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: -180, maximum: 180, example: 4.05 })
  @IsOptional()
  @IsNumber(FINITE)
  @Min(-180)
  @Max(180)
  longitude?: number | null;

  @RadiusField({ default: 250 })
  radius_m?: number;

  @DwellField()
  dwell_minutes?: number | null;
}

/** PUT body: every field optional (partial update); address/latitude/longitude may be null to clear them. */
export class UpdatePlaceDto {
  @NameField({}, { optional: true })
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1000 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  @MultilineText()
  address?: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: -90, maximum: 90 })
  @IsOptional()
  @IsNumber(FINITE)
  @Min(-90)
  @Max(90)
  latitude?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: -180, maximum: 180 })
  @IsOptional()
  @IsNumber(FINITE)
  @Min(-180)
  @Max(180)
  longitude?: number | null;

  @RadiusField()
  radius_m?: number;

  @DwellField()
  dwell_minutes?: number | null;
}

export class ListPlacesQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name.' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;
}
