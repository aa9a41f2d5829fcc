import { raw, type Sql } from '../infrastructure/database/db.js';
import type { AlertEventResponse, NotificationEventResponse } from './dto/notification.response.js';

/**
 * The tracker events as other features read them (webhooks send the same event object the inbox
 * shows): the select expression building an event's wire object in SQL, and its mapping. Two
 * families share notification_events: status changes, and alerts opened or resolved (whose row
 * carries the Alert as it was then).
 */

interface EventRowBase {
  id: string;
  tracker_id: number;
  tracker_name: string;
  production_run_id: number;
  client_id: number;
  occurred_at: string;
  created_at: string;
}

/** A status change as the wire carries it (the trigger's xact_id stays in the database). */
export interface StatusChangedEventRow extends EventRowBase {
  type: 'tracker.status_changed';
  from_status: string;
  to_status: string;
  source: string;
  status_entry_id: string;
  storage_location_id: number | null;
  delivery_location_id: number | null;
}

/** An alert opened or resolved, as the wire carries it. */
export interface AlertEventRow extends EventRowBase {
  type: 'tracker.alert_opened' | 'tracker.alert_resolved';
  alert: AlertEventResponse['alert'];
}

export type NotificationEventRow = StatusChangedEventRow | AlertEventRow;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A jsonb NotificationEventRow of the `notification_events` row aliased `alias` (ids as text, timestamps as wire text). */
export function notificationEventJson(alias: string): Sql {
  const e = (column: string) => `${alias}.${column}`;
  const common = `'id', ${e('id')}::text, 'type', ${e('type')}, 'tracker_id', ${e('tracker_id')},
    'tracker_name', ${e('tracker_name')}, 'production_run_id', ${e('production_run_id')}, 'client_id', ${e('client_id')},
    'occurred_at', ${iso(e('occurred_at'))}, 'created_at', ${iso(e('created_at'))}`;
  return raw(`CASE WHEN ${e('alert')} IS NULL THEN jsonb_build_object(${common},
    'from_status', ${e('from_status')}, 'to_status', ${e('to_status')}, 'source', ${e('source')},
    'status_entry_id', ${e('status_entry_id')}::text, 'storage_location_id', ${e('storage_location_id')},
    'delivery_location_id', ${e('delivery_location_id')})
    ELSE jsonb_build_object(${common}, 'alert', ${e('alert')}) END`);
}

/** Wire shape of an event (bigint ids as numbers: they stay far below 2^53). */
export function toNotificationEventResponse(e: NotificationEventRow): NotificationEventResponse | AlertEventResponse {
  const base = {
    id: Number(e.id),
    tracker_id: e.tracker_id,
    tracker_name: e.tracker_name,
    production_run_id: e.production_run_id,
    client_id: e.client_id,
  };
  if (e.type !== 'tracker.status_changed')
    return { ...base, type: e.type, alert: e.alert, occurred_at: e.occurred_at, created_at: e.created_at };
  return {
    ...base,
    type: e.type,
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
