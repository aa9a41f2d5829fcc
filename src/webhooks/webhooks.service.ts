import { Inject, Injectable } from '@nestjs/common';
import { AccessScope } from '../common/auth/access-scope.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { fail, found } from '../common/errors/domain-error.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page, type PaginationQuery } from '../common/http/pagination.js';
import { Db } from '../infrastructure/database/db.js';
import type { ListDeliveriesQuery } from './dto/list-deliveries.query.js';
import type { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook.dto.js';
import {
  toDeliveryResponse,
  toWebhookResponse,
  type DeliveryResponse,
  type WebhookResponse,
  type WebhookWithSecretResponse,
} from './dto/webhook.response.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookOwner } from './webhook-owner.js';
import { newSigningSecret, WebhookSecrets } from './webhook-secrets.js';
import { hostProblem, urlProblem, type TargetRules } from './webhook-target.js';
import { WebhookWorker } from './webhook-worker.service.js';
import { WEBHOOK_ERRORS } from './webhooks.errors.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * Webhook subscriptions of the caller (an admin manages all), their secrets and delivery log.
 * Targets are checked when set (form; in production also the resolved address) and again by every
 * delivery. New deliveries are queued by the database; the routes that queue one themselves (test,
 * retry, enabling again) wake the workers through the same pg_notify, and this instance's at once.
 */
@Injectable()
export class WebhooksService {
  private readonly rules: TargetRules;

  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly secrets: WebhookSecrets,
    private readonly worker: WebhookWorker,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.rules = config.webhooks;
  }

  async create(user: AuthUser, body: CreateWebhookDto): Promise<WebhookWithSecretResponse> {
    await this.checkUrl(body.url);
    const clientIds = await this.checkClients(user, body.client_ids);
    const secret = newSigningSecret();
    const row = await this.webhooks.insert({
      userId: user.id,
      url: body.url,
      eventTypes: body.event_types,
      clientIds,
      description: body.description ?? null,
      secret: this.secrets.seal(secret),
    });
    return { ...toWebhookResponse(row), secret };
  }

  async list(user: AuthUser, query: PaginationQuery): Promise<Page<WebhookResponse>> {
    const { rows, total } = await this.webhooks.list(WebhookOwner.of(user), query);
    return toPage(rows.map(toWebhookResponse), total, query);
  }

  async get(user: AuthUser, id: number): Promise<WebhookResponse> {
    return toWebhookResponse(
      found(await this.webhooks.find(WebhookOwner.of(user), id), WEBHOOK_ERRORS.webhookNotFound),
    );
  }

  async update(user: AuthUser, id: number, body: UpdateWebhookDto): Promise<WebhookResponse> {
    if (body.url !== undefined) await this.checkUrl(body.url);
    const owner = WebhookOwner.of(user);
    const { row, resumed } = await this.db.transaction(async () => {
      const before = found(await this.webhooks.find(owner, id, true), WEBHOOK_ERRORS.webhookNotFound);
      const updated = await this.webhooks.update(owner, id, {
        url: body.url,
        eventTypes: body.event_types,
        description: body.description,
        isActive: body.is_active,
      });
      const enabled = !before.is_active && updated!.is_active;
      if (enabled) await this.webhooks.resumeDeliveries(id);
      return { row: updated!, resumed: enabled };
    });
    if (resumed) this.worker.wake();
    return toWebhookResponse(row);
  }

  async delete(user: AuthUser, id: number): Promise<WebhookResponse> {
    return toWebhookResponse(
      found(await this.webhooks.delete(WebhookOwner.of(user), id), WEBHOOK_ERRORS.webhookNotFound),
    );
  }

  async rotateSecret(user: AuthUser, id: number): Promise<WebhookWithSecretResponse> {
    const secret = newSigningSecret();
    const row = found(
      await this.webhooks.rotate(WebhookOwner.of(user), id, this.secrets.seal(secret)),
      WEBHOOK_ERRORS.webhookNotFound,
    );
    return { ...toWebhookResponse(row), secret };
  }

  async test(user: AuthUser, id: number): Promise<DeliveryResponse> {
    const delivery = await this.db.transaction(async () => {
      const webhook = found(await this.webhooks.find(WebhookOwner.of(user), id, true), WEBHOOK_ERRORS.webhookNotFound);
      if (!webhook.is_active) fail(WEBHOOK_ERRORS.webhookDisabled);
      return this.deliveries.queueTest(id);
    });
    this.worker.wake();
    return toDeliveryResponse(delivery);
  }

  async deliveriesOf(user: AuthUser, id: number, query: ListDeliveriesQuery): Promise<Page<DeliveryResponse>> {
    const owner = WebhookOwner.of(user);
    found(await this.webhooks.find(owner, id), WEBHOOK_ERRORS.webhookNotFound);
    const { rows, total } = await this.deliveries.list(owner, id, query.status, query);
    return toPage(rows.map(toDeliveryResponse), total, query);
  }

  /**
   * A new attempt now (same webhook-id), whatever the delivery's status and even while the webhook is
   * disabled: the webhook stays disabled and its other pending deliveries keep waiting.
   */
  async retry(user: AuthUser, id: number, deliveryId: number): Promise<DeliveryResponse> {
    const owner = WebhookOwner.of(user);
    const delivery = await this.db.transaction(async () => {
      found(await this.webhooks.find(owner, id, true), WEBHOOK_ERRORS.webhookNotFound);
      return found(await this.deliveries.retryNow(owner, id, deliveryId), WEBHOOK_ERRORS.deliveryNotFound);
    });
    this.worker.wake();
    return toDeliveryResponse(delivery);
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = urlProblem(url, this.rules) ?? (await hostProblem(new URL(url), this.rules));
    if (problem !== null) throw RequestValidationException.field('url', problem);
  }

  /**
   * The webhook's clients: each must exist and be visible to the owner now; a caller with an API key
   * narrowed to clients must name a subset of the key's (a webhook of every client would exceed it).
   */
  private async checkClients(user: AuthUser, clientIds: number[] | undefined): Promise<number[] | null> {
    const keyClients = user.apiKey?.clientIds ?? null;
    if (clientIds === undefined) {
      if (keyClients === null) return null;
      throw RequestValidationException.field(
        'client_ids',
        "required with an API key narrowed to clients: a subset of the key's client_ids",
      );
    }
    const outsideKey = keyClients === null ? [] : clientIds.filter((id) => !keyClients.includes(id));
    if (outsideKey.length > 0)
      throw RequestValidationException.field(
        'client_ids',
        `must be a subset of the API key's client_ids (not: ${outsideKey.join(', ')})`,
      );
    const visible = new Set(await this.webhooks.visibleClients(AccessScope.of(user), clientIds));
    const invisible = clientIds.filter((id) => !visible.has(id));
    if (invisible.length > 0)
      throw RequestValidationException.field(
        'client_ids',
        `must be existing clients you can see (not: ${invisible.slice(0, 20).join(', ')})`,
      );
    return [...clientIds].sort((a, b) => a - b);
  }
}
