import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { MailQueueRepository } from './mail-queue.repository.js';

/**
 * Hands the e-mail rules to the database at start: the trigger that queues e-mails in each
 * event's transaction reads them from mail_settings. Only a process that sends (SMTP_URL set)
 * writes them: a process without SMTP_URL (a CLI run, an instance configured without mail) says
 * once that it sends no e-mail and leaves the deployment's rules as they are, so it can never
 * switch queueing off under running senders (changes in between would be lost). A new database
 * queues nothing until a sender starts; `npm run cli -- mail:off` switches queueing off on purpose.
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
    if (!enabled) {
      this.logger.log('E-mail notifications are off: SMTP_URL is not set');
      return;
    }
    const alertKinds = this.config.alerts.emailKinds;
    await this.queue.writeRules({
      enabled,
      statuses: mail.statuses,
      alertKinds,
      digestSeconds: mail.digestMinutes * 60,
    });
    this.logger.log(
      `E-mail notifications on: ${mail.statuses.join(', ')}; alerts: ${alertKinds.join(', ') || 'none'}; digest window ${mail.digestMinutes} min`,
    );
  }

  /** Stops queueing e-mails for every instance (`npm run cli -- mail:off`); what is queued stays queued. */
  turnOff(): Promise<void> {
    return this.queue.disable();
  }
}
