import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, PaginationQuery, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { OutgoingWebhooks } from '../common/openapi/outgoing-webhooks.js';
import { ListDeliveriesQuery } from './dto/list-deliveries.query.js';
import { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook.dto.js';
import {
  WebhookAlertPayload,
  WebhookStatusChangedPayload,
  WebhookTestPayload,
} from './dto/webhook-payload.response.js';
import { DeliveryResponse, WebhookResponse, WebhookWithSecretResponse } from './dto/webhook.response.js';
import { WEBHOOK_PAYLOAD_DOCS } from './webhook-payload.docs.js';
import { WEBHOOK_ERRORS } from './webhooks.errors.js';
import { WebhooksService } from './webhooks.service.js';

const BAD_ID = ERRORS.invalidField('id', 'must be a positive integer');
const BAD_URL = ERRORS.invalidField('url', 'must not contain credentials (user@ or user:pass@)');
const BAD_CLIENTS = ERRORS.invalidField('client_ids', 'must be existing clients you can see (not: 7)');

/** Outgoing webhooks of the caller (an admin: everyone's). API keys need the `webhooks` scope. */
@ApiTags('webhooks')
@ApiExtraModels(WebhookStatusChangedPayload, WebhookAlertPayload, WebhookTestPayload)
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'Subscribe a URL to events (the signing secret is answered only now)',
    description:
      "Every event of a subscribed type that the caller may see at the event's time (within `client_ids` when given) is POSTed to the URL, signed per Standard Webhooks; see the document's `webhooks` for the requests.",
  })
  @ApiCreatedResponse({ type: WebhookWithSecretResponse })
  @ApiErrors(
    { ...ERRORS.validationFailed, summary: 'Bad url, event_types, description or client_ids' },
    BAD_URL,
    BAD_CLIENTS,
  )
  @OutgoingWebhooks(WEBHOOK_PAYLOAD_DOCS)
  create(@CurrentUser() user: AuthUser, @Body() body: CreateWebhookDto): Promise<WebhookWithSecretResponse> {
    return this.webhooks.create(user, body);
  }

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: "The caller's webhooks (an admin: all)" })
  @ApiOkResponse({ type: PageOf(WebhookResponse) })
  @ApiErrors({ ...ERRORS.validationFailed, summary: 'skip/limit out of range' })
  list(@CurrentUser() user: AuthUser, @Query() query: PaginationQuery): Promise<Page<WebhookResponse>> {
    return this.webhooks.list(user, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a webhook' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(WEBHOOK_ERRORS.webhookNotFound, BAD_ID)
  get(@CurrentUser() user: AuthUser, @IdParam('id') id: number): Promise<WebhookResponse> {
    return this.webhooks.get(user, id);
  }

  @Patch(':id')
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'Change url, event_types, description or is_active (true enables it again and clears disabled_reason)',
    description:
      'Enabling a disabled webhook resumes its pending deliveries still within their 24 hours; older ones fail.',
  })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(WEBHOOK_ERRORS.webhookNotFound, { ...ERRORS.validationFailed, summary: 'Bad id or field' }, BAD_URL)
  update(
    @CurrentUser() user: AuthUser,
    @IdParam('id') id: number,
    @Body() body: UpdateWebhookDto,
  ): Promise<WebhookResponse> {
    return this.webhooks.update(user, id, body);
  }

  @Delete(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Delete a webhook and its delivery log; answers the deleted webhook' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(WEBHOOK_ERRORS.webhookNotFound, BAD_ID)
  delete(@CurrentUser() user: AuthUser, @IdParam('id') id: number): Promise<WebhookResponse> {
    return this.webhooks.delete(user, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'A new signing secret (answered only now); for 24 hours deliveries carry signatures by both',
  })
  @ApiOkResponse({ type: WebhookWithSecretResponse })
  @ApiErrors(WEBHOOK_ERRORS.webhookNotFound, BAD_ID)
  rotateSecret(@CurrentUser() user: AuthUser, @IdParam('id') id: number): Promise<WebhookWithSecretResponse> {
    return this.webhooks.rotateSecret(user, id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Queue a webhook.test delivery (data: {webhook_id}), sent at once' })
  @ApiAcceptedResponse({ type: DeliveryResponse })
  @ApiErrors(WEBHOOK_ERRORS.webhookNotFound, WEBHOOK_ERRORS.webhookDisabled, BAD_ID)
  test(@CurrentUser() user: AuthUser, @IdParam('id') id: number): Promise<DeliveryResponse> {
    return this.webhooks.test(user, id);
  }

  @Get(':id/deliveries')
  @Access('admin', 'user')
  @ApiOperation({ summary: "The webhook's deliveries, newest first" })
  @ApiOkResponse({ type: PageOf(DeliveryResponse) })
  @ApiErrors(WEBHOOK_ERRORS.webhookNotFound, { ...ERRORS.validationFailed, summary: 'Bad id, status, skip or limit' })
  deliveries(
    @CurrentUser() user: AuthUser,
    @IdParam('id') id: number,
    @Query() query: ListDeliveriesQuery,
  ): Promise<Page<DeliveryResponse>> {
    return this.webhooks.deliveriesOf(user, id, query);
  }

  @Post(':id/deliveries/:delivery_id/retry')
  @HttpCode(202)
  @Access('admin', 'user')
  @ApiOperation({
    summary: 'Send a delivery again now (a new attempt, same webhook-id), whatever its status',
    description:
      'Pending again with a new 24-hour retry period; an attempt in flight records nothing. Also on a disabled webhook: that one delivery is attempted now, the webhook stays disabled and its other pending deliveries keep waiting.',
  })
  @ApiAcceptedResponse({ type: DeliveryResponse })
  @ApiErrors(
    WEBHOOK_ERRORS.webhookNotFound,
    WEBHOOK_ERRORS.deliveryNotFound,
    ERRORS.invalidField('delivery_id', 'must be a positive integer'),
  )
  retry(
    @CurrentUser() user: AuthUser,
    @IdParam('id') id: number,
    @IdParam('delivery_id') deliveryId: number,
  ): Promise<DeliveryResponse> {
    return this.webhooks.retry(user, id, deliveryId);
  }
}
