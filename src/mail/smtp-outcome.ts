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
