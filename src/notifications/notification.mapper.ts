import type { NotificationResponse } from './dto/notification.response.js';
import type { NotificationRow } from './notifications.repository.js';

/** Wire shape of a notification (bigint ids as numbers: they stay far below 2^53). */
export function toNotificationResponse(row: NotificationRow): NotificationResponse {
  const e = row.event;
  return {
    id: Number(row.id),
    event: {
      id: Number(e.id),
      type: e.type,
      tracker_id: e.tracker_id,
      tracker_name: e.tracker_name,
      production_run_id: e.production_run_id,
      client_id: e.client_id,
      from_status: e.from_status,
      to_status: e.to_status,
      source: e.source,
      status_entry_id: Number(e.status_entry_id),
      storage_location_id: e.storage_location_id,
      delivery_location_id: e.delivery_location_id,
      occurred_at: e.occurred_at,
      created_at: e.created_at,
    },
    read: row.read,
    created_at: row.created_at,
  };
}
