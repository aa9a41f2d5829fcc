import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { MailQueueRepository } from './mail-queue.repository.js';

/**
 * Hands the e-mail rules to the database at start: the trigger that queues e-mails in each
 * event's transaction reads them from mail_settings. Without SMTP_URL queueing is off, and the
 * start log says so once. Every instance (and CLI run) writes the rules of its own environment, so
 * instances of one deployment must share the mail settings.
 */
@Injectable()
export class MailSettingsService implements OnModuleInit {
  private readonly logger = new Logger(MailSettingsService.name);

  constructor(
    private readonly queue: MailQueueRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    const mail = this.config.mail;
    const enabled = mail.smtpUrl !== undefined;
    await this.queue.writeRules({ enabled, statuses: mail.statuses, digestSeconds: mail.digestMinutes * 60 });
    if (!enabled) this.logger.log('E-mail notifications are off: SMTP_URL is not set');
    else
      this.logger.log(`E-mail notifications on: ${mail.statuses.join(', ')}, digest window ${mail.digestMinutes} min`);
  }
}
