import { MailSettingsService } from '../../mail/mail-settings.service.js';
import type { CliCommand } from '../command.js';

/**
 * The one way to stop queueing e-mails for a whole deployment: instances without SMTP_URL never
 * switch it off (they do not send), and the next instance that starts with SMTP_URL switches it on
 * again. E-mails already queued stay queued.
 */
export const mailOffCommand: CliCommand = {
  name: 'mail:off',
  usage: 'mail:off   stop queueing e-mails for every instance (until one starts with SMTP_URL again)',
  run: async (app) => {
    await app.get(MailSettingsService).turnOff();
    console.log('E-mail queueing is off for every instance; an instance started with SMTP_URL turns it on again.');
  },
};
