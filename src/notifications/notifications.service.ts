import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { DomainError } from '../common/errors/domain-error.js';
import { NOTIFICATION_ERRORS } from './notifications.errors.js';
import { toPage, type Page } from '../common/http/pagination.js';
import type { NotificationResponse } from './dto/notification.response.js';
import { toNotificationResponse } from './notification.mapper.js';
import { NotificationsRepository, type Inbox } from './notifications.repository.js';

/**
 * The caller's in-app inbox: every operation is bound to the caller's own notifications — and for
 * a request with an API key narrowed to `client_ids`, to the notifications of those clients.
 */
@Injectable()
export class NotificationsService {
  constructor(private readonly repository: NotificationsRepository) {}

  async list(
    user: AuthUser,
    query: { skip: number; limit: number; unread?: boolean },
  ): Promise<Page<NotificationResponse>> {
    const { rows, total } = await this.repository.list(inboxOf(user), query.unread, query);
    return toPage(rows.map(toNotificationResponse), total, query);
  }

  async unreadCount(user: AuthUser): Promise<{ unread: number }> {
    return { unread: await this.repository.unreadCount(inboxOf(user)) };
  }

  async markRead(user: AuthUser, id: number): Promise<NotificationResponse> {
    const row = await this.repository.markRead(inboxOf(user), id);
    if (!row) throw new DomainError(NOTIFICATION_ERRORS.notificationNotFound);
    return toNotificationResponse(row);
  }

  async markAllRead(user: AuthUser): Promise<{ updated: number }> {
    return { updated: await this.repository.markAllRead(inboxOf(user)) };
  }
}

function inboxOf(user: AuthUser): Inbox {
  return { userId: user.id, clientIds: user.apiKey?.clientIds ?? null };
}
