import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { AlertResponse } from '../../alerts/dto/alert.response.js';
import { TRACKER_STATES, STATUS_ENTRY_SOURCES } from '../../tracker-states/tracker-status.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

/** Ids of the notification tables are bigint: they outgrow int4. */
const BIG_ID_SCHEMA = { type: 'integer', minimum: 1 } as const;
const TIMESTAMP = { type: 'string', format: 'date-time', example: '2026-11-21T10:04:05.123Z' } as const;

/** A change of a tracker's current (status, storage location, destination), as recorded when it happened. */
export class NotificationEventResponse {
  @ApiProperty({ ...BIG_ID_SCHEMA, example: 981 }) id: number;
  @ApiProperty({ enum: ['tracker.status_changed'], example: 'tracker.status_changed' }) type: 'tracker.status_changed';
  @ApiProperty({ ...ID_SCHEMA, example: 42, description: 'The tracker (it may have been deleted since)' })
  tracker_id: number;
  @ApiProperty({ example: 'TRK-0042', description: 'Its name at the time of the event' }) tracker_name: string;
  @ApiProperty({ ...ID_SCHEMA, example: 7 }) production_run_id: number;
  @ApiProperty({ ...ID_SCHEMA, example: 3 }) client_id: number;
  @ApiProperty({ enum: TRACKER_STATES, example: 'IN_TRANSIT' }) from_status: string;
  @ApiProperty({ enum: TRACKER_STATES, example: 'DELIVERED' }) to_status: string;
  @ApiProperty({
    enum: STATUS_ENTRY_SOURCES,
    example: 'geofence',
    description: 'Source of the status entry that became current',
  })
  source: string;
  @ApiProperty({ ...BIG_ID_SCHEMA, example: 5120, description: 'The status entry that became current' })
  status_entry_id: number;
  @ApiProperty({ ...ID_SCHEMA, nullable: true, example: null, description: 'Set while IN_STORAGE' })
  storage_location_id: number | null;
  @ApiProperty({ ...ID_SCHEMA, nullable: true, example: 12, description: 'The destination after the change' })
  delivery_location_id: number | null;
  @ApiProperty({ ...TIMESTAMP, description: "The status entry's timestamp" }) occurred_at: string;
  @ApiProperty({ ...TIMESTAMP, description: 'When the change was written' }) created_at: string;
}

/** An alert of a tracker opened or resolved, as recorded when it happened. */
export class AlertEventResponse {
  @ApiProperty({ ...BIG_ID_SCHEMA, example: 982 }) id: number;
  @ApiProperty({ enum: ['tracker.alert_opened', 'tracker.alert_resolved'], example: 'tracker.alert_opened' })
  type: 'tracker.alert_opened' | 'tracker.alert_resolved';
  @ApiProperty({ ...ID_SCHEMA, example: 42, description: 'The tracker (it may have been deleted since)' })
  tracker_id: number;
  @ApiProperty({ example: 'TRK-0042', description: 'Its name at the time of the event' }) tracker_name: string;
  @ApiProperty({ ...ID_SCHEMA, example: 7 }) production_run_id: number;
  @ApiProperty({ ...ID_SCHEMA, example: 3 }) client_id: number;
  @ApiProperty({ type: AlertResponse, description: 'The alert as it was at the event (resolved_at set once resolved)' })
  alert: AlertResponse;
  @ApiProperty({ ...TIMESTAMP, description: "The alert's opened_at, or resolved_at for a resolution" })
  occurred_at: string;
  @ApiProperty({ ...TIMESTAMP, description: 'When the event was written' }) created_at: string;
}

/** One event as delivered to one user. */
export class NotificationResponse {
  @ApiProperty({ ...BIG_ID_SCHEMA, example: 20431, description: 'Also the `id:` of the event on the stream' })
  id: number;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(NotificationEventResponse) }, { $ref: getSchemaPath(AlertEventResponse) }],
    discriminator: {
      propertyName: 'type',
      mapping: {
        'tracker.status_changed': getSchemaPath(NotificationEventResponse),
        'tracker.alert_opened': getSchemaPath(AlertEventResponse),
        'tracker.alert_resolved': getSchemaPath(AlertEventResponse),
      },
    },
  })
  event: NotificationEventResponse | AlertEventResponse;
  @ApiProperty({ example: false }) read: boolean;
  @ApiProperty(TIMESTAMP) created_at: string;
}

export class UnreadCountResponse {
  @ApiProperty({ type: 'integer', minimum: 0, example: 3 }) unread: number;
}

export class ReadAllResponse {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 3,
    description: 'Notifications that were unread and are now read',
  })
  updated: number;
}

export class StreamTicketResponse {
  @ApiProperty({ example: 'eyJ1Ijo0Mi4uLn0.3q2-7w', description: 'Pass as `?ticket=` to GET /notifications/stream' })
  ticket: string;
  @ApiProperty({ enum: [60], example: 60, description: 'Seconds within which the ticket must be used (once)' })
  expires_in: 60;
}
