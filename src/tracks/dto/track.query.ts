import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, ValidateBy } from 'class-validator';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';
import { IsIntInRange, QueryInt } from '../../common/http/query-transforms.js';
import { TRACK_FORMATS, type TrackFormat } from '../track-formats.js';

export const MAX_SIMPLIFY_M = 10_000;
export const MIN_MAX_POINTS = 2;
export const MAX_MAX_POINTS = 50_000;
export const DEFAULT_MAX_POINTS = 10_000;

// Plain decimal text: `25`, `2.5`; no sign, exponent or hex.
const DECIMAL_TEXT = /^(?:0|[1-9][0-9]{0,5})(?:\.[0-9]{1,6})?$/;

/** Query of `GET /trackers/{id}/track`. */
export class TrackQuery {
  @ApiPropertyOptional({ enum: TRACK_FORMATS, default: 'geojson' })
  @IsOptional()
  @IsIn(TRACK_FORMATS, { message: `must be one of ${TRACK_FORMATS.join(', ')}` })
  format: TrackFormat = 'geojson';

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Inclusive lower bound on the report time (ISO 8601; without an offset UTC). Default: no bound.',
  })
  @IsOptional()
  @IsoDateTime()
  start?: Date;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Inclusive upper bound on the report time; not before `start`. Default: no bound.',
  })
  @IsOptional()
  @IsoDateTime()
  end?: Date;

  @ApiPropertyOptional({
    type: 'number',
    minimum: 0,
    maximum: MAX_SIMPLIFY_M,
    default: 0,
    description:
      'Douglas–Peucker tolerance in metres: no dropped report is farther than this from the simplified line. 0 keeps every report.',
  })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' && DECIMAL_TEXT.test(value) ? Number(value) : value))
  @ValidateBy({
    name: 'simplifyM',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && value >= 0 && value <= MAX_SIMPLIFY_M,
      defaultMessage: () => `must be a number from 0 to ${MAX_SIMPLIFY_M}`,
    },
  })
  simplify_m: number = 0;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_MAX_POINTS,
    maximum: MAX_MAX_POINTS,
    default: DEFAULT_MAX_POINTS,
    description: 'More points than this after simplification → 422 (ask for a narrower window or a larger simplify_m).',
  })
  @IsOptional()
  @QueryInt()
  @IsIntInRange(MIN_MAX_POINTS, MAX_MAX_POINTS)
  max_points: number = DEFAULT_MAX_POINTS;
}
