import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { TRACKER_STATES, type TrackerStatus } from '../../tracker-states/tracker-status.js';
import { QueryStatusList } from '../../trackers/dto/list-trackers.query.js';

/** Query of `GET /production-runs/{id}/positions`. */
export class RunPositionsQuery {
  @ApiPropertyOptional({
    description: `One state or a comma list of: ${TRACKER_STATES.join(', ')}. Default: every state.`,
    type: String,
  })
  @IsOptional()
  @QueryStatusList()
  @IsIn(TRACKER_STATES, { each: true, message: `must be one or more of ${TRACKER_STATES.join(', ')}` })
  status?: TrackerStatus[];
}
