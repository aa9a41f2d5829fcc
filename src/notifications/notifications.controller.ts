import {
  applyDecorators,
  Controller,
  Get,
  Headers,
  HttpCode,
  Post,
  Query,
  Req,
  Res,
  UseGuards,
  type Type,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiSecurity,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiExtraModels,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Access, API_KEY_SCHEME, BEARER_SCHEME, Public } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { NOTIFICATION_ERRORS } from './notifications.errors.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { ListNotificationsQuery } from './dto/list-notifications.query.js';
import {
  AlertEventResponse,
  NotificationEventResponse,
  NotificationResponse,
  ReadAllResponse,
  StreamTicketResponse,
  UnreadCountResponse,
} from './dto/notification.response.js';
import { StreamQuery } from './dto/stream.query.js';
import { NotificationStreams } from './notification-streams.service.js';
import { NotificationsService } from './notifications.service.js';
import { StreamAuthGuard, type StreamRequest } from './stream-auth.guard.js';
import { StreamTickets, TICKET_SECONDS, type StreamIdentity } from './stream-tickets.service.js';

const LAST_EVENT_ID = /^(0|[1-9][0-9]{0,17})$/;

/** A route on the caller's own inbox: any signed-in user, one summary, one 200 answer. */
const InboxRoute = (summary: string, type: Type) =>
  applyDecorators(Access('admin', 'user'), ApiOperation({ summary }), ApiOkResponse({ type }));

@ApiTags('notifications')
@ApiExtraModels(NotificationEventResponse, AlertEventResponse)
@Controller('notifications')
export class NotificationsController {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly streams: NotificationStreams,
    private readonly tickets: StreamTickets,
  ) {}

  @Get()
  @InboxRoute("The caller's notifications, newest first", PageOf(NotificationResponse))
  @ApiErrors({ ...ERRORS.validationFailed, summary: 'skip/limit out of range, or unread not a boolean' })
  list(@CurrentUser() user: AuthUser, @Query() query: ListNotificationsQuery): Promise<Page<NotificationResponse>> {
    return this.notifications.list(user, query);
  }

  @Get('unread-count')
  @InboxRoute("How many of the caller's notifications are unread", UnreadCountResponse)
  unreadCount(@CurrentUser() user: AuthUser): Promise<UnreadCountResponse> {
    return this.notifications.unreadCount(user);
  }

  @Post('read-all')
  @HttpCode(200)
  @InboxRoute("Marks all the caller's notifications read", ReadAllResponse)
  readAll(@CurrentUser() user: AuthUser): Promise<ReadAllResponse> {
    return this.notifications.markAllRead(user);
  }

  @Post('stream-ticket')
  @HttpCode(201)
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'A ticket to open the stream without an Authorization header (EventSource)',
    description:
      'Single use, valid for 60 s, bound to the caller and to the credential that asked for it: the stream it opens ends when that access token expires or is revoked, or when that API key is revoked or expires. An API key needs the `write` scope for this route and `read` for the stream the ticket opens.',
  })
  @ApiCreatedResponse({ type: StreamTicketResponse })
  streamTicket(
    @CurrentUser() user: AuthUser,
    @Headers('authorization') authorization: string | undefined,
  ): StreamTicketResponse {
    return { ticket: this.tickets.issueFor(user, authorization), expires_in: TICKET_SECONDS };
  }

  @Get('stream')
  @Public()
  @UseGuards(StreamAuthGuard)
  // Listed as @Access lists them: bearer first (decorators apply bottom-up).
  @ApiSecurity(API_KEY_SCHEME)
  @ApiBearerAuth(BEARER_SCHEME)
  @ApiOperation({
    summary: 'Live notifications (Server-Sent Events)',
    description: [
      'Each new notification of the caller as `id: <notification id>`, `event: notification`, `data: <Notification JSON>`; a `: keepalive` comment every 15 s.',
      'With `Last-Event-ID` (or `last_event_id`), the notifications after that id are replayed first, in id order: at most the newest `NOTIFICATION_STREAM_REPLAY_MAX` (500) of them. When there were more, a `replay-truncated` event without an id comes first, its data `{"replay_limit": <max>, "first_id": <id of the first replayed notification>}`; the ones in between are read with GET /notifications.',
      'A user holds at most `NOTIFICATION_STREAMS_PER_USER` (5) open streams, counted across every instance; one more answers 429 with `Retry-After` and sends nothing.',
      'Authenticate with the bearer header, an API key with the `read` scope (`X-API-Key` or `Authorization: Bearer tps_…`; a key narrowed to clients streams only their events), or `?ticket=`. The stream ends when the access token or API key (for a ticket: the credential that asked for it) expires or is revoked, the user is deactivated, or the service shuts down; reconnect with `Last-Event-ID`.',
    ].join('\n\n'),
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'The last notification id the client received',
    schema: { type: 'string', pattern: LAST_EVENT_ID.source },
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: 'An event stream',
    content: {
      'text/event-stream': {
        schema: {
          type: 'string',
          example:
            'id: 20431\nevent: notification\ndata: {"id":20431,"event":{...},"read":false,"created_at":"2026-11-21T10:04:05.123Z"}\n\n',
        },
      },
    },
  })
  @ApiErrors(
    ERRORS.notAuthenticated,
    { ...ERRORS.invalidCredentials, summary: 'Token or API key invalid, expired or revoked; ticket bad, used or late' },
    { ...ERRORS.notEnoughPermissions, summary: 'A role without notifications, or an API key without the read scope' },
    { ...ERRORS.validationFailed, summary: 'Last-Event-ID or last_event_id not a notification id' },
    NOTIFICATION_ERRORS.tooManyStreams(),
    ERRORS.tooManyKeyAttempts,
  )
  async stream(
    @Req() req: StreamRequest,
    @Res() res: Response,
    @Query() query: StreamQuery,
    @Headers('last-event-id') header: string | undefined,
  ): Promise<void> {
    const lastEventId = header ?? query.last_event_id ?? null;
    if (lastEventId !== null && !LAST_EVENT_ID.test(lastEventId))
      throw RequestValidationException.field('Last-Event-ID', 'must be a notification id (digits)');
    await this.streams.open(res, req.streamIdentity as StreamIdentity, lastEventId);
  }

  @Post(':notification_id/read')
  @HttpCode(200)
  @InboxRoute('Marks one notification read (idempotent)', NotificationResponse)
  @ApiErrors(
    NOTIFICATION_ERRORS.notificationNotFound,
    ERRORS.invalidField('notification_id', 'must be a positive integer'),
  )
  read(@CurrentUser() user: AuthUser, @IdParam('notification_id') id: number): Promise<NotificationResponse> {
    return this.notifications.markRead(user, id);
  }
}
