import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** `GET /notifications/stream`. */
export class StreamQuery {
  @ApiPropertyOptional({
    description:
      'A ticket from POST /notifications/stream-ticket, instead of the Authorization header (for EventSource)',
    maxLength: 1000,
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  ticket?: string;

  @ApiPropertyOptional({
    type: 'string',
    pattern: '^(0|[1-9][0-9]{0,17})$',
    description:
      'Like the Last-Event-ID header (which wins when both are sent): replay the notifications after this id first',
  })
  @IsOptional()
  @IsString()
  @Matches(/^(0|[1-9][0-9]{0,17})$/, { message: 'must be a notification id (digits)' })
  last_event_id?: string;
}
