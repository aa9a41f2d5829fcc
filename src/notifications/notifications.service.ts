import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { DomainError } from '../common/errors/domain-error.js';
import { NOTIFICATION_ERRORS } from './notifications.errors.js';
import { toPage, type Page } from '../common/http/pagination.js';
import type { NotificationResponse } from './dto/notification.response.js';
import { toNotificationResponse } from './notification.mapper.js';
import { NotificationsRepository } from './notifications.repository.js';

/** The caller's in-app inbox: every operation is bound to the caller's own notifications. */
@Injectable()
export class NotificationsService {
  constructor(private readonly repository: NotificationsRepository) {}

  async list(
    user: AuthUser,
    query: { skip: number; limit: number; unread?: boolean },
  ): Promise<Page<NotificationResponse>> {
    const { rows, total } = await this.repository.list(user.id, query.unread, query);
    return toPage(rows.map(toNotificationResponse), total, query);
  }

  async unreadCount(user: AuthUser): Promise<{ unread: number }> {
    return { unread: await this.repository.unreadCount(user.id) };
  }

  async markRead(user: AuthUser, id: number): Promise<NotificationResponse> {
    const row = await this.repository.markRead(user.id, id);
    if (!row) throw new DomainError(NOTIFICATION_ERRORS.notificationNotFound);
    return toNotificationResponse(row);
  }

  async markAllRead(user: AuthUser): Promise<{ updated: number }> {
    return { updated: await this.repository.markAllRead(user.id) };
  }
}
