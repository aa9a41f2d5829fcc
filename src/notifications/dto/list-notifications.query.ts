import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { QueryBoolean } from '../../common/http/query-transforms.js';

/** `GET /notifications`: newest first. */
export class ListNotificationsQuery extends PaginationQuery {
  @ApiPropertyOptional({ type: 'boolean', description: '`true`: only unread; `false`: only read; absent: all' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  unread?: boolean;
}
