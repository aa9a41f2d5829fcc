import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './webhook-event-types.js';

/** `GET /webhooks/{id}/deliveries`: newest first. */
export class ListDeliveriesQuery extends PaginationQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: 'Only deliveries in this status' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}
