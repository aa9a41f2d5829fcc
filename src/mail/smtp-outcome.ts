/** What a failed SMTP conversation means for the message. */
export type SmtpFailure = { kind: 'temporary' | 'permanent'; reason: string };

interface NodemailerError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

/**
 * A 5xx reply to the message or its recipient is a permanent refusal: recorded, never retried.
 * Everything else is temporary: 4xx replies, refused or dropped connections, timeouts, TLS
 * trouble — and an authentication refusal (535), which is the server refusing our credentials, not
 * the message, and gets the retry period for an operator to fix SMTP_URL.
 */
export function classifySmtpError(error: unknown): SmtpFailure {
  const e = (error ?? {}) as NodemailerError;
  const reason = (e.response ?? e.message ?? String(error)).slice(0, 500);
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  if (code !== undefined && code >= 500 && code < 600 && e.code !== 'EAUTH') return { kind: 'permanent', reason };
  return { kind: 'temporary', reason };
}

/**
 * Delay before retry `attempt` (1 = the first retry): retryMinMs doubled per attempt, at most
 * retryMaxMs, minus up to 10 % jitter so instances that failed together do not retry together.
 */
export function retryDelayMs(attempt: number, retryMinMs: number, retryMaxMs: number, random = Math.random): number {
  const base = Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(base * (1 - 0.1 * random()));
}
