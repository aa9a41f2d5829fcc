import { raw, type Sql } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';
import type { NotificationEventResponse } from './dto/notification.response.js';

/**
 * The tracker events as other features read them (webhooks send the same event object the inbox
 * shows): the select expression building an event's wire object in SQL, and its mapping.
 */

/** A `notification_events` row as the wire carries it (the trigger's xact_id stays in the database). */
export type NotificationEventRow = Omit<
  Tables['notification_events'],
  'type' | 'occurred_at' | 'created_at' | 'xact_id'
> & {
  type: 'tracker.status_changed';
  occurred_at: string;
  created_at: string;
};

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A jsonb NotificationEventRow of the `notification_events` row aliased `alias` (ids as text, timestamps as wire text). */
export function notificationEventJson(alias: string): Sql {
  const e = (column: string) => `${alias}.${column}`;
  return raw(`jsonb_build_object('id', ${e('id')}::text, 'type', ${e('type')}, 'tracker_id', ${e('tracker_id')},
    'tracker_name', ${e('tracker_name')}, 'production_run_id', ${e('production_run_id')}, 'client_id', ${e('client_id')},
    'from_status', ${e('from_status')}, 'to_status', ${e('to_status')}, 'source', ${e('source')},
    'status_entry_id', ${e('status_entry_id')}::text, 'storage_location_id', ${e('storage_location_id')},
    'delivery_location_id', ${e('delivery_location_id')}, 'occurred_at', ${iso(e('occurred_at'))},
    'created_at', ${iso(e('created_at'))})`);
}

/** Wire shape of an event (bigint ids as numbers: they stay far below 2^53). */
export function toNotificationEventResponse(e: NotificationEventRow): NotificationEventResponse {
  return {
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
  };
}
