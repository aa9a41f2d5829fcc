import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';
import { PaginationQuery } from '../../common/http/pagination.js';

export const LOCATION_PRECISIONS = ['exact', 'approximate', 'none'] as const;
export type LocationPrecision = (typeof LOCATION_PRECISIONS)[number];

/** `POST /trackers/{id}/share-links`. */
export class CreateShareLinkDto {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'When the link stops working: in the future, at most 90 days ahead. Default: 7 days ahead.',
  })
  @IsOptional()
  @IsoDateTime()
  expires_at?: Date;

  @ApiPropertyOptional({
    enum: LOCATION_PRECISIONS,
    default: 'approximate',
    description:
      '`exact`: coordinates as reported; `approximate`: rounded to 2 decimals (about 1 km); `none`: no location at all.',
  })
  @IsOptional()
  @IsIn(LOCATION_PRECISIONS, { message: `must be one of ${LOCATION_PRECISIONS.join(', ')}` })
  location_precision?: LocationPrecision;
}

/** `GET /trackers/{id}/share-links`. */
export class ListShareLinksQuery extends PaginationQuery {}
