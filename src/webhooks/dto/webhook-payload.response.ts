import { ApiProperty } from '@nestjs/swagger';
import { AlertEventResponse, NotificationEventResponse } from '../../notifications/dto/notification.response.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

/** The body of a `tracker.status_changed` delivery (documented under the document's `webhooks`). */
export class WebhookStatusChangedPayload {
  @ApiProperty({ enum: ['tracker.status_changed'], example: 'tracker.status_changed' }) type: 'tracker.status_changed';
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    example: '2026-11-21T10:04:05.123Z',
    description: "The event's occurred_at",
  })
  timestamp: string;
  @ApiProperty({ type: NotificationEventResponse, description: 'The event, as the notification inbox shows it' })
  data: NotificationEventResponse;
}

/** The body of a `tracker.alert_opened` or `tracker.alert_resolved` delivery. */
export class WebhookAlertPayload {
  @ApiProperty({ enum: ['tracker.alert_opened', 'tracker.alert_resolved'], example: 'tracker.alert_opened' })
  type: 'tracker.alert_opened' | 'tracker.alert_resolved';
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    example: '2026-11-21T10:04:05.123Z',
    description: "The event's occurred_at: when the alert opened, or resolved",
  })
  timestamp: string;
  @ApiProperty({ type: AlertEventResponse, description: 'The event, as the notification inbox shows it' })
  data: AlertEventResponse;
}

export class WebhookTestData {
  @ApiProperty(ID_SCHEMA) webhook_id: number;
}

/** The body of a `webhook.test` delivery (POST /webhooks/{id}/test). */
export class WebhookTestPayload {
  @ApiProperty({ enum: ['webhook.test'], example: 'webhook.test' }) type: 'webhook.test';
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    example: '2026-11-21T10:04:05.123Z',
    description: 'When the test was queued',
  })
  timestamp: string;
  @ApiProperty({ type: WebhookTestData }) data: WebhookTestData;
}
