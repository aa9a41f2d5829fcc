import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsBoolean, IsIn, IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { QueryBoolean, QueryList } from '../../common/http/query-transforms.js';
import { TRACKER_STATES, type TrackerStatus } from '../../tracker-states/tracker-status.js';
import { parseIdText } from '../../common/http/id-field.js';
import { OptionalIdField } from '../../common/http/optional-id-field.js';

export const TRACKER_SORT_FIELDS = ['id', 'name', 'status', 'created_at', 'updated_at'] as const;
export type TrackerSortField = (typeof TRACKER_SORT_FIELDS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** `?status=in_transit,DELIVERED`: a comma list of states, matched case-insensitively. */
export function QueryStatusList(): PropertyDecorator {
  return Transform(({ value }) => {
    const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
    return parts.map((p) => p.trim().toUpperCase()).filter((p) => p !== '');
  });
}

/** Query of `GET /trackers`. */
export class ListTrackersQuery extends PaginationQuery {
  @ApiPropertyOptional({
    description: 'One tracker id or a comma list, e.g. `7` or `1,2,3`. Default: every tracker.',
    type: String,
  })
  @IsOptional()
  @QueryList()
  @ArrayMaxSize(1000)
  @ValidateBy(
    { name: 'idText', validator: { validate: (v) => parseIdText(v) !== null } },
    { each: true, message: 'must be a positive integer or a comma list of them' },
  )
  id?: string[];

  @OptionalIdField({}, { fromQuery: true })
  production_run_id?: number;

  @ApiPropertyOptional({
    description: `One state or a comma list of: ${TRACKER_STATES.join(', ')}, e.g. \`IN_TRANSIT,DELIVERED\`. Default: every state.`,
    type: String,
  })
  @IsOptional()
  @QueryStatusList()
  @IsIn(TRACKER_STATES, { each: true, message: `must be one or more of ${TRACKER_STATES.join(', ')}` })
  status?: TrackerStatus[];

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ enum: TRACKER_SORT_FIELDS, default: 'id' })
  @IsOptional()
  @IsIn(TRACKER_SORT_FIELDS, { message: `must be one of ${TRACKER_SORT_FIELDS.join(', ')}` })
  sort_by: TrackerSortField = 'id';

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'asc' })
  @IsOptional()
  @IsIn(SORT_ORDERS, { message: 'must be one of asc, desc' })
  sort_order: SortOrder = 'asc';

  @ApiPropertyOptional({
    default: false,
    description: "Attach each tracker's latest location (else `latest_location` is null)",
  })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  include_latest_location: boolean = false;
}

/** Query of `GET /trackers/status-counts`. */
export class StatusCountsQuery {
  @OptionalIdField({}, { fromQuery: true })
  production_run_id?: number;
}

/** Query of `GET /storage-locations/{id}/trackers`. */
export class LocationTrackersQuery extends PaginationQuery {}

/** Query of `GET /delivery-locations/{id}/trackers`. */
export class DeliveryLocationTrackersQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: `One state or a comma list of: ${TRACKER_STATES.join(', ')}`, type: String })
  @IsOptional()
  @QueryStatusList()
  @IsIn(TRACKER_STATES, { each: true, message: `must be one or more of ${TRACKER_STATES.join(', ')}` })
  status?: TrackerStatus[];
}

/** Query of `POST /trackers/import-csv`. */
export class ImportTrackersQuery {
  @OptionalIdField({ description: 'Production run for rows without one' }, { fromQuery: true })
  production_run_id?: number;

  @ApiPropertyOptional({ default: false, description: 'Skip duplicates instead of failing with 409' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  skip_duplicates: boolean = false;

  @ApiPropertyOptional({ default: false, description: 'Validate and report without writing' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  dry_run: boolean = false;
}
