import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';

const PREFIX = 'whsec_';
const SEALED = 'v1';

/** A new signing secret: `whsec_` and 32 random bytes in standard base64 (with padding), as Standard Webhooks has it. */
export function newSigningSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks signature of one attempt: `v1,` and the base64 HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part after `whsec_`.
 */
export function signatureOf(secret: string, webhookId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Signing secrets at rest. They cannot be hashed (each delivery is signed with them), so they are
 * stored encrypted: AES-256-GCM under a key derived (HKDF-SHA256) from WEBHOOK_SECRET_KEY, or from
 * JWT_SECRET when that is not set. A stored secret reads `v1.<key id>.<iv>.<tag>.<ciphertext>`
 * (base64url parts); the key id (a hash of the key) tells a secret sealed under another key apart
 * from a corrupt one, so a changed key answers a clear error instead of a wrong signature.
 */
@Injectable()
export class WebhookSecrets {
  private readonly key: Buffer;
  private readonly keyId: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const material = config.webhooks.secretKey ?? config.jwtSecret;
    if (!material) throw new Error('webhook secrets need WEBHOOK_SECRET_KEY or JWT_SECRET');
    this.key = Buffer.from(hkdfSync('sha256', material, 'tracker-pipeline', 'webhook signing secrets', 32));
    this.keyId = createHash('sha256').update(this.key).digest('base64url').slice(0, 8);
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [SEALED, this.keyId, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(stored: string): string {
    const [version, keyId, iv, tag, sealed] = stored.split('.');
    if (version !== SEALED || sealed === undefined) throw new Error('the stored signing secret is malformed');
    if (keyId !== this.keyId)
      throw new Error(
        'the signing secret was encrypted under another key (WEBHOOK_SECRET_KEY or JWT_SECRET changed): rotate the secret',
      );
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }
}
