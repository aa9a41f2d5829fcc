/** The part of the configuration reader webhookConfig uses (app-config.ts's Reader). */
interface ConfigReader {
  readonly problems: string[];
  optional(name: string): string | undefined;
  int(name: string, fallback: number, min: number, max: number): number;
  bool(name: string, fallback: boolean): boolean;
}

export interface WebhookConfig {
  /** Refuse targets that are or resolve to loopback, private, link-local or unspecified addresses (production unless WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  refusePrivateTargets: boolean;
  /** Only https:// targets (production). */
  requireHttps: boolean;
  /** Idle poll period of the delivery worker (new deliveries also wake it through LISTEN/NOTIFY). */
  pollMs: number;
  /** First retry delay after a failed attempt; doubles per attempt up to retryMaxMs. */
  retryMinMs: number;
  retryMaxMs: number;
  /** Deliveries in flight at once per instance, and at most this many of them to one webhook. */
  concurrency: number;
  perWebhookConcurrency: number;
  /** Key that encrypts signing secrets at rest (WEBHOOK_SECRET_KEY); unset: derived from JWT_SECRET. */
  secretKey: string | undefined;
}

export function webhookConfig(r: ConfigReader, nodeEnv: string): WebhookConfig {
  const production = nodeEnv === 'production';
  const allowPrivateTargets = r.bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', false);
  const secretKey = r.optional('WEBHOOK_SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32)
    r.problems.push('WEBHOOK_SECRET_KEY must be at least 32 characters');
  const webhooks: WebhookConfig = {
    refusePrivateTargets: production && !allowPrivateTargets,
    requireHttps: production,
    pollMs: r.int('WEBHOOK_POLL_MS', 2000, 10, 5000),
    retryMinMs: r.int('WEBHOOK_RETRY_MIN_MS', 20_000, 10, 30_000),
    retryMaxMs: r.int('WEBHOOK_RETRY_MAX_MS', 3_600_000, 10, 3_600_000),
    concurrency: r.int('WEBHOOK_CONCURRENCY', 16, 1, 256),
    perWebhookConcurrency: r.int('WEBHOOK_PER_WEBHOOK_CONCURRENCY', 4, 1, 256),
    secretKey,
  };
  if (webhooks.retryMaxMs < webhooks.retryMinMs)
    r.problems.push('WEBHOOK_RETRY_MAX_MS must not be below WEBHOOK_RETRY_MIN_MS');
  return webhooks;
}
