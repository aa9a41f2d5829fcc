import type { NotificationResponse } from './dto/notification.response.js';
import { toNotificationEventResponse } from './notification-events.port.js';
import type { NotificationRow } from './notifications.repository.js';

/** Wire shape of a notification (bigint ids as numbers: they stay far below 2^53). */
export function toNotificationResponse(row: NotificationRow): NotificationResponse {
  return {
    id: Number(row.id),
    event: toNotificationEventResponse(row.event),
    read: row.read,
    created_at: row.created_at,
  };
}
