import { Module } from '@nestjs/common';
import { MailHealth } from './mail.health.js';
import { MailMetrics } from './mail-metrics.js';
import { MailQueueRepository } from './mail-queue.repository.js';
import { MailSettingsService } from './mail-settings.service.js';
import { MailWorker } from './mail-worker.service.js';

/** E-mail digests of status changes: the rules handed to the database, the queue and its sending worker. No routes. */
@Module({
  providers: [MailHealth, MailQueueRepository, MailSettingsService, MailMetrics, MailWorker],
  exports: [MailWorker],
})
export class MailModule {}
