import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNumber, IsOptional, IsString, Length, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PaginationQuery } from '../common/http/pagination.js';
import { MultilineText } from '../common/http/text-input.js';

/**
 * Bodies and queries shared by storage and delivery locations (both kinds have the same fields
 * and rules). Each kind subclasses them so OpenAPI names the schemas after the resource.
 */
const trim = Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));
const FINITE = { allowNaN: false, allowInfinity: false };

export class CreatePlaceDto {
  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Rotterdam Hub' })
  @trim
  @IsString()
  @Length(1, 255)
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
}

/** PUT body: every field optional (partial update); address/latitude/longitude may be null to clear them. */
export class UpdatePlaceDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255 })
  @ValidateIf((_, value) => value !== undefined)
  @trim
  @IsString()
  @Length(1, 255)
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
}

export class ListPlacesQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name.' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;
}
