import { ApiProperty } from '@nestjs/swagger';
import { TimestampedResponse, timestampsOf } from '../../common/http/timestamped.response.js';
import { isoUtc } from '../../common/http/timestamps.js';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';
import type { DeliveryRow } from '../webhook-deliveries.repository.js';
import type { WebhookRow } from '../webhooks.repository.js';
import {
  DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_TEST_TYPE,
  type DeliveryStatus,
} from './webhook-event-types.js';

const BIG_ID_SCHEMA = { type: 'integer', minimum: 1 } as const;
const TIMESTAMP = { type: 'string', format: 'date-time', example: '2026-11-21T10:04:05.123Z' } as const;

export class WebhookResponse extends TimestampedResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty({ ...ID_SCHEMA, description: 'The owner: events are those this user may see' }) user_id: number;
  @ApiProperty({ format: 'uri', example: 'https://erp.example.com/hooks/tracker-pipeline' }) url: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true, example: ['tracker.status_changed'] })
  event_types: string[];
  @ApiProperty({
    ...ID_SCHEMA,
    isArray: true,
    nullable: true,
    example: null,
    description: 'null: every visible client',
  })
  client_ids: number[] | null;
  @ApiProperty({ type: String, nullable: true, example: 'ERP stock bookings' }) description: string | null;
  @ApiProperty({ description: 'false: no new deliveries; pending ones wait until it is enabled again' })
  is_active: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Why the webhook was disabled (410 Gone, 24 hours without a successful delivery, or through the API)',
  })
  disabled_reason: string | null;
}

/** A webhook with its signing secret: answered only when it is created and when the secret is rotated. */
export class WebhookWithSecretResponse extends WebhookResponse {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2A4xG8xWK+Q=',
    description:
      '`whsec_` and 32 random bytes in standard base64. Shown only now: store it to verify the `webhook-signature` header.',
  })
  secret: string;
}

export class DeliveryResponse {
  @ApiProperty({ ...BIG_ID_SCHEMA, example: 5120, description: 'Also the `webhook-id` header of every attempt' })
  id: number;
  @ApiProperty(ID_SCHEMA) webhook_id: number;
  @ApiProperty({ enum: [...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_TYPE], example: 'tracker.status_changed' })
  event_type: string;
  @ApiProperty({ ...BIG_ID_SCHEMA, nullable: true, example: 981, description: 'null for webhook.test' })
  event_id: number | null;
  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'succeeded' }) status: DeliveryStatus;
  @ApiProperty({ ...COUNT_SCHEMA, example: 1 }) attempts: number;
  @ApiProperty({ ...TIMESTAMP, nullable: true }) last_attempt_at: string | null;
  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'When the next attempt is due; null unless pending' })
  next_attempt_at: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 200, description: 'HTTP status of the last attempt' })
  response_status: number | null;
  @ApiProperty({ ...COUNT_SCHEMA, nullable: true, example: 84 }) response_time_ms: number | null;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'Why the last attempt failed' })
  error: string | null;
}

export function toWebhookResponse(row: WebhookRow): WebhookResponse {
  return {
    id: row.id,
    user_id: row.user_id,
    url: row.url,
    event_types: row.event_types,
    client_ids: row.client_ids,
    description: row.description,
    is_active: row.is_active,
    disabled_reason: row.disabled_reason,
    ...timestampsOf(row),
  };
}

export function toDeliveryResponse(row: DeliveryRow): DeliveryResponse {
  return {
    id: Number(row.id),
    webhook_id: row.webhook_id,
    event_type: row.event_type,
    event_id: row.event_id === null ? null : Number(row.event_id),
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: isoUtc(row.last_attempt_at),
    next_attempt_at: isoUtc(row.next_attempt_at),
    response_status: row.response_status,
    response_time_ms: row.response_time_ms,
    error: row.error,
  };
}
