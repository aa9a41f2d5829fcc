import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { QueryBoolean } from '../../common/http/query-transforms.js';
import { OptionalIdField } from '../../common/http/optional-id-field.js';
import { ALERT_KINDS, type AlertKind } from './alert-kinds.js';

/** `?kind=silent,overdue`: a comma list of kinds (repeating the parameter also works). */
function QueryKindList(): PropertyDecorator {
  return Transform(({ value }) =>
    (Array.isArray(value) ? value : [value])
      .flatMap((v) => String(v).split(','))
      .map((p) => p.trim())
      .filter((p) => p !== ''),
  );
}

/** Query of `GET /trackers/{id}/alerts`: newest opened first. */
export class TrackerAlertsQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: '`true`: only open alerts; `false`: only resolved ones. Default: both.' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  open?: boolean;

  @ApiPropertyOptional({
    description: `One kind or a comma list of: ${ALERT_KINDS.join(', ')}, e.g. \`silent,overdue\`. Default: every kind.`,
    type: String,
  })
  @IsOptional()
  @QueryKindList()
  @IsIn(ALERT_KINDS, { each: true, message: `must be one or more of ${ALERT_KINDS.join(', ')}` })
  kind?: AlertKind[];
}

/** Query of `GET /alerts`: newest opened first; an invisible tracker or run gives an empty page. */
export class ListAlertsQuery extends TrackerAlertsQuery {
  @OptionalIdField({ description: 'Only alerts of this tracker' }, { fromQuery: true })
  tracker_id?: number;

  @OptionalIdField({ description: "Only alerts of this production run's trackers" }, { fromQuery: true })
  production_run_id?: number;
}
