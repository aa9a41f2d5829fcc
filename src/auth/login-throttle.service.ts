import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DomainError } from '../common/errors/domain-error.js';
import { AUTH_LOGIN_ERRORS } from './auth.errors.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';

const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_EMAIL = 5;
export const MAX_FAILURES_PER_IP = 20;

/** 429 with the seconds until the window ends, sent as `Retry-After` (at least 1). */
export class LoginThrottledException extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(AUTH_LOGIN_ERRORS.tooManyLoginAttempts, {
      headers: { 'Retry-After': String(Math.max(1, retryAfterSeconds)) },
    });
  }
}

interface CounterState {
  count: number;
  ttlSeconds: number;
}

/**
 * Login throttling: more than 5 failed attempts for one e-mail, or 20 from one IP,
 * within a fixed 15-minute window → 429 until the window ends. Counters live in the shared cache
 * store (Redis when configured), so every instance sees the same numbers.
 *
 * Both counters are incremented atomically *before* the password is checked, and the attempt is
 * judged by the count that increment returned: of any number of parallel attempts at most the
 * limit get past, whichever instance they reach (a read-then-increment would let every attempt in
 * flight through).
 *
 * - Per e-mail (normalized, hashed so no address is stored in Redis): a successful login resets
 *   the counter. The 6th attempt within the window is refused whether its password is right or
 *   not — otherwise the limit would not stop guessing.
 * - Per IP (`req.ip`, which honours TRUST_PROXY as exactly one hop, so only the address appended
 *   by our proxy counts and a client-supplied X-Forwarded-For entry changes nothing): only
 *   failures count, so many people behind one NAT can still log in. The attempt is counted up
 *   front like any other and handed back (decremented) when it turns out not to be a failed
 *   password check: a success, or a refusal by either limit. While attempts are in flight their
 *   reservations count, so more than 20 simultaneous logins from one IP may see a 429 early.
 *
 * Store unavailable: we fail *open to a per-instance counter* rather than closed — refusing every
 * login while Redis is down would lock everyone out, while an in-process counter still limits
 * guessing (per instance) until the store is back. Never an error for the caller.
 */
@Injectable()
export class LoginThrottle {
  private readonly fallback = new Map<string, { count: number; expiresAt: number }>();

  constructor(private readonly cache: CacheService) {}

  /** Counts the attempt for the IP and the e-mail; throws LoginThrottledException when over a limit. */
  async begin(email: string, ip: string): Promise<void> {
    const perIp = await this.increment(ipKey(ip), 1);
    if (perIp.count > MAX_FAILURES_PER_IP) {
      await this.increment(ipKey(ip), -1);
      throw new LoginThrottledException(perIp.ttlSeconds);
    }
    const perEmail = await this.increment(emailKey(email), 1);
    if (perEmail.count > MAX_FAILURES_PER_EMAIL) {
      await this.increment(ipKey(ip), -1);
      throw new LoginThrottledException(perEmail.ttlSeconds);
    }
  }

  /** The password check failed: both counts taken by `begin` stand. */
  async failed(_ip: string): Promise<void> {}

  /** The login succeeded: the e-mail counter starts over and the IP gets its attempt back. */
  async succeeded(email: string, ip?: string): Promise<void> {
    const key = emailKey(email);
    this.fallback.delete(key);
    await this.cache.resetCounter(key);
    if (ip !== undefined) await this.increment(ipKey(ip), -1);
  }

  private async increment(key: string, by: 1 | -1): Promise<CounterState> {
    const shared = await this.cache.increment(key, LOGIN_WINDOW_SECONDS, by);
    // CacheService already logs the outage (at most once per breaker period). While it is down the
    // local counter takes over; its count is what was counted here since.
    return shared ?? this.incrementLocally(key, by);
  }

  private incrementLocally(key: string, by: 1 | -1): CounterState {
    const now = Date.now();
    if (this.fallback.size > 10_000) {
      for (const [k, v] of this.fallback) if (v.expiresAt <= now) this.fallback.delete(k);
    }
    const entry = this.fallback.get(key);
    const live = entry && entry.expiresAt > now ? entry : { count: 0, expiresAt: now + LOGIN_WINDOW_SECONDS * 1000 };
    live.count += by;
    this.fallback.set(key, live);
    return { count: live.count, ttlSeconds: Math.max(1, Math.ceil((live.expiresAt - now) / 1000)) };
  }
}

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function emailKey(email: string): string {
  return `login:email:${createHash('sha256').update(normalizeEmail(email)).digest('base64url')}`;
}

function ipKey(ip: string): string {
  return `login:ip:${ip}`;
}
