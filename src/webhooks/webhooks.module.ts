import { Module } from '@nestjs/common';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhookWorker } from './webhook-worker.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksHealth } from './webhooks.health.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Outgoing webhooks: subscriptions, their signing secrets, the delivery queue (written by the
 * database in each event's transaction, see webhook-deliveries.db-rules.ts) and its sending worker.
 */
@Module({
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhooksRepository,
    WebhookDeliveriesRepository,
    WebhookSecrets,
    WebhookMetrics,
    WebhookWorker,
    WebhooksHealth,
  ],
  exports: [WebhookWorker],
})
export class WebhooksModule {}
