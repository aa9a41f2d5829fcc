import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { PositiveId } from '../../common/http/id-field.js';
import { MultilineText } from '../../common/http/text-input.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-event-types.js';

const MAX_DESCRIPTION = 500;

const NotNullWhenGiven = () => ValidateIf((_: object, value: unknown) => value !== undefined);

const UrlField = (required: boolean) =>
  applyDecorators(
    (required ? ApiProperty : ApiPropertyOptional)({
      format: 'uri',
      maxLength: 2000,
      example: 'https://erp.example.com/hooks/tracker-pipeline',
      description:
        'Absolute https:// URL (http:// only outside production), without user information; in production its host must not be or resolve to a loopback, private, link-local or unspecified address.',
    }),
    ...(required ? [] : [NotNullWhenGiven()]),
    // The length (2 000) and the URL's form are checked by the service, one clear message each.
    IsString(),
  );

const EventTypesField = (required: boolean) =>
  applyDecorators(
    (required ? ApiProperty : ApiPropertyOptional)({
      enum: WEBHOOK_EVENT_TYPES,
      isArray: true,
      minItems: 1,
      example: ['tracker.status_changed'],
      description: 'The event types to receive (at least one, no repeats)',
    }),
    ...(required ? [] : [NotNullWhenGiven()]),
    IsArray(),
    ArrayNotEmpty(),
    ArrayUnique({ message: 'must not repeat an event type' }),
    IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: `must contain only ${WEBHOOK_EVENT_TYPES.join(', ')}` }),
  );

const DescriptionField = () =>
  applyDecorators(
    ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_DESCRIPTION }),
    IsOptional(),
    IsString(),
    MaxLength(MAX_DESCRIPTION),
    MultilineText(),
  );

/** `POST /webhooks`: a subscription of the caller. */
export class CreateWebhookDto {
  @UrlField(true)
  url: string;

  @EventTypesField(true)
  event_types: WebhookEventType[];

  @DescriptionField()
  description?: string | null;

  @ApiPropertyOptional({
    ...ID_SCHEMA,
    isArray: true,
    minItems: 1,
    description:
      "Only events of these clients (each one the owner can see; an API key narrowed to clients must name a subset of its own). Absent: every client the owner can see at the event's time.",
  })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(10_000)
  @ArrayUnique({ message: 'must not repeat a client' })
  @PositiveId({ each: true })
  client_ids?: number[];
}

/** `PATCH /webhooks/{id}`: any of these; `is_active: true` enables a disabled webhook again (its disabled_reason is cleared). */
export class UpdateWebhookDto {
  @UrlField(false)
  url?: string;

  @EventTypesField(false)
  event_types?: WebhookEventType[];

  @DescriptionField()
  description?: string | null;

  @ApiPropertyOptional({ description: 'false disables the webhook (no new deliveries; pending ones wait)' })
  @NotNullWhenGiven()
  @IsBoolean()
  is_active?: boolean;
}
