import nodemailer, { type Transporter } from 'nodemailer';
import type { MailConfig } from '../common/config/app-config.js';
import type { RenderedDigest } from './mail-digest.renderer.js';

/**
 * nodemailer over SMTP_URL. One connection per message (no pool): a server that hangs or drops
 * costs one message its attempt, never a shared connection. Each step of the conversation has a
 * timeout (connect, greeting, socket inactivity), so a send always ends.
 */
export class SmtpSender {
  private readonly transport: Transporter;

  constructor(private readonly config: MailConfig & { smtpUrl: string }) {
    const url = new URL(config.smtpUrl);
    this.transport = nodemailer.createTransport({
      host: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 25,
      secure: url.protocol === 'smtps:',
      auth: url.username
        ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
        : undefined,
      connectionTimeout: config.smtpTimeoutMs,
      greetingTimeout: config.smtpTimeoutMs,
      socketTimeout: config.smtpTimeoutMs,
      dnsTimeout: config.smtpTimeoutMs,
    });
  }

  /** Resolves once the server accepted the message; rejects with nodemailer's error otherwise. */
  async send(to: string, digest: RenderedDigest): Promise<void> {
    const info = await this.transport.sendMail({
      from: this.config.from,
      to,
      subject: digest.subject,
      text: digest.text,
      html: digest.html,
    });
    // One recipient: accepted unless it is listed as rejected (nodemailer rejects then anyway).
    if ((info.rejected as unknown[]).length > 0)
      throw Object.assign(new Error(`Recipient rejected: ${info.response}`), { responseCode: 550 });
  }

  close(): void {
    this.transport.close();
  }
}

/** Longest one send can take with these timeouts (connect + greeting + a few idle socket waits). */
export function sendDeadlineMs(config: MailConfig): number {
  return config.smtpTimeoutMs * 6;
}
