import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { CacheService } from '../infrastructure/cache/cache.service.js';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_EMAIL = 5;
export const MAX_FAILURES_PER_IP = 20;
export const TOO_MANY_LOGIN_ATTEMPTS = 'Too many login attempts. Try again later.';

/** 429 with the seconds until the window ends (sent as `Retry-After` by LoginThrottledFilter). */
export class LoginThrottledException extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super({ detail: TOO_MANY_LOGIN_ATTEMPTS }, HttpStatus.TOO_MANY_REQUESTS);
  }
}

interface CounterState {
  count: number;
  ttlSeconds: number;
}

/**
 * Login throttling (contract §2): more than 5 failed attempts for one e-mail, or 20 from one IP,
 * within a fixed 15-minute window → 429 until the window ends. Counters live in the shared cache
 * store (Redis when configured), so every instance sees the same numbers.
 *
 * - Per e-mail (normalized, hashed so no address is stored in Redis): the attempt is counted
 *   *before* the password is checked, so a burst of parallel guesses cannot slip past the limit;
 *   a successful login resets the counter. The 6th attempt within the window is refused whether
 *   its password is right or not — otherwise the limit would not stop guessing.
 * - Per IP (`req.ip`, which honours TRUST_PROXY as exactly one hop, so only the address appended
 *   by our proxy counts and a client-supplied X-Forwarded-For entry changes nothing): only
 *   failures count, so many people behind one NAT can still log in. It is checked before and
 *   incremented after the password check; concurrent requests can overshoot it by the number in
 *   flight, which the per-e-mail limit and the argon2 cost bound.
 *
 * Store unavailable: we fail *open to a per-instance counter* rather than closed — refusing every
 * login while Redis is down would lock everyone out, while an in-process counter still limits
 * guessing (per instance) until the store is back. Never an error for the caller.
 */
@Injectable()
export class LoginThrottle {
  private readonly fallback = new Map<string, { count: number; expiresAt: number }>();

  constructor(private readonly cache: CacheService) {}

  /** Throws LoginThrottledException when this attempt is over a limit; else counts it for the e-mail. */
  async begin(email: string, ip: string): Promise<void> {
    const perIp = await this.read(ipKey(ip));
    if (perIp.count >= MAX_FAILURES_PER_IP) throw new LoginThrottledException(perIp.ttlSeconds);
    const perEmail = await this.increment(emailKey(email));
    if (perEmail.count > MAX_FAILURES_PER_EMAIL) throw new LoginThrottledException(perEmail.ttlSeconds);
  }

  /** The password check failed: the e-mail attempt stays counted, the IP gets one more. */
  async failed(ip: string): Promise<void> {
    await this.increment(ipKey(ip));
  }

  async succeeded(email: string): Promise<void> {
    const key = emailKey(email);
    this.fallback.delete(key);
    await this.cache.resetCounter(key);
  }

  private async increment(key: string): Promise<CounterState> {
    const shared = await this.cache.increment(key, LOGIN_WINDOW_SECONDS);
    // CacheService already logs the outage (at most once per breaker period).
    return shared ?? this.incrementLocally(key);
  }

  private async read(key: string): Promise<CounterState> {
    // counter() answers 0 when the store is down; the local fallback holds what was counted then.
    const shared = await this.cache.counter(key);
    const local = this.readLocally(key);
    return local.count > shared.count ? local : shared;
  }

  private incrementLocally(key: string): CounterState {
    const now = Date.now();
    if (this.fallback.size > 10_000) {
      for (const [k, v] of this.fallback) if (v.expiresAt <= now) this.fallback.delete(k);
    }
    const entry = this.fallback.get(key);
    const live = entry && entry.expiresAt > now ? entry : { count: 0, expiresAt: now + LOGIN_WINDOW_SECONDS * 1000 };
    live.count += 1;
    this.fallback.set(key, live);
    return { count: live.count, ttlSeconds: Math.max(1, Math.ceil((live.expiresAt - now) / 1000)) };
  }

  private readLocally(key: string): CounterState {
    const entry = this.fallback.get(key);
    const now = Date.now();
    if (!entry || entry.expiresAt <= now) return { count: 0, ttlSeconds: 0 };
    return { count: entry.count, ttlSeconds: Math.max(1, Math.ceil((entry.expiresAt - now) / 1000)) };
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function emailKey(email: string): string {
  return `login:email:${createHash('sha256').update(normalizeEmail(email)).digest('base64url')}`;
}

function ipKey(ip: string): string {
  return `login:ip:${ip}`;
}
